import FoundationEssentials
import MQTT
import Wearables

/// A device the gateway manages: from the configuration or added over MQTT.
public struct ManagedDevice: Sendable, Equatable, Codable {
    /// The topic segment: the friendly name, else `<driver>_<address without colons>`.
    public var id: String
    public var address: String
    public var driver: String
    /// The name given in the configuration or by `device/rename`.
    public var name: String?
    /// Per-device options (`device/options`): batch_ms, qos, retain, notify, link, sync_every_s.
    public var options: DeviceOptions
    /// Listed in config.yaml (cannot be removed over MQTT for good: it comes back at the next start).
    public var fromConfiguration: Bool
    /// The configuration the driver re-applies on every connection: `devices[].configure`, replaced by the
    /// full configuration a `request/configure` last set, so a gateway restart keeps the sensors running.
    public var configure: [String: DeviceValue]?

    /// The `driver` of a configured device whose driver is chosen from its advertisement once it is seen.
    public static let driverToDetect = ""

    public var needsDriverDetection: Bool { driver == Self.driverToDetect }

    public init(id: String, address: String, driver: String, name: String? = nil,
                options: DeviceOptions = DeviceOptions(), fromConfiguration: Bool = false,
                configure: [String: DeviceValue]? = nil) {
        self.id = id
        self.address = address
        self.driver = driver
        self.name = name
        self.options = options
        self.fromConfiguration = fromConfiguration
        self.configure = configure
    }
}

/// Per-device options: how samples are published, how notifications are delivered, when the link is held.
public struct DeviceOptions: Sendable, Equatable, Codable {
    /// Collect samples for this long and publish them as one `{"samples":[…]}` message; 0 publishes each.
    public var batchMilliseconds: Int = 0
    /// QoS of sample messages (0 by contract).
    public var sampleQoS: Int = 0
    /// Retain sample messages (off by contract).
    public var retainSamples: Bool = false
    /// "acquire" (AcquireNotify, default) or "start_notify" for peripherals that misbehave with AcquireNotify.
    public var notify: String = "acquire"
    /// When the gateway holds the device's link (`OnDemandVisits`): `always`, `on_demand` (a visit every
    /// `syncEverySeconds` and for each command, then the link is let go), or `auto` (on demand for a device that only
    /// syncs while an ESPHome proxy serves it, whose connection slots are few; always otherwise).
    public var link: LinkMode = .auto
    /// The time between two visits of an on-demand device (each one syncs when the driver can).
    public var syncEverySeconds: Int = 3600

    public init() {}

    enum CodingKeys: String, CodingKey {
        case batchMilliseconds = "batch_ms", sampleQoS = "qos", retainSamples = "retain", notify, link,
             syncEverySeconds = "sync_every_s"
    }

    /// Every key may be missing: a `devices.json` written before a key existed keeps its device with the default.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = DeviceOptions()
        batchMilliseconds = try container.decodeIfPresent(Int.self, forKey: .batchMilliseconds) ?? defaults.batchMilliseconds
        sampleQoS = try container.decodeIfPresent(Int.self, forKey: .sampleQoS) ?? defaults.sampleQoS
        retainSamples = try container.decodeIfPresent(Bool.self, forKey: .retainSamples) ?? defaults.retainSamples
        notify = try container.decodeIfPresent(String.self, forKey: .notify) ?? defaults.notify
        link = try container.decodeIfPresent(LinkMode.self, forKey: .link) ?? defaults.link
        syncEverySeconds = try container.decodeIfPresent(Int.self, forKey: .syncEverySeconds) ?? defaults.syncEverySeconds
    }

    /// As the contract shows them (`device/options`, `options` answers).
    public var object: [String: DeviceValue] {
        ["batch_ms": .integer(Int64(batchMilliseconds)), "qos": .integer(Int64(sampleQoS)),
         "retain": .flag(retainSamples), "notify": .text(notify), "link": .text(link.rawValue),
         "sync_every_s": .integer(Int64(syncEverySeconds))]
    }
}

/// When the gateway holds a device's link (`device/options` `link`; docs/radios.md, "Slots given back").
public enum LinkMode: String, Sendable, Codable, CaseIterable {
    case always
    case onDemand = "on_demand"
    case auto
}

/// Keeps the devices added over MQTT and the names given to them in `<state_dir>/devices.json`, written
/// with `AtomicFile`, so a crash leaves the old or the new list, never half of one.
public struct DeviceStore: Sendable {
    public let path: String
    public let stateDirectory: String

    public init(stateDirectory: String) {
        self.stateDirectory = stateDirectory
        path = stateDirectory + "/devices.json"
    }

    public func load() throws -> [ManagedDevice] {
        guard let bytes = readWholeFile(atPath: path) else { return [] }
        return try JSONDecoder().decode([ManagedDevice].self, from: Data(bytes))
    }

    public func save(_ devices: [ManagedDevice]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(devices.sorted { $0.id < $1.id })
        try AtomicFile.replace(path, with: data)
    }
}
