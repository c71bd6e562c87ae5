import BlueZ
import Wearables
import SimulatedWearables

/// Everything a simulation run starts from: the adapter, the devices in range, and the faults and device
/// events to inject at given times. Loaded from YAML by `ScenarioLoader` or built in code by tests.
public struct Scenario: Sendable {
    /// The seed every device's random values derive from (with its address), so runs repeat.
    public var seed: UInt64
    public var adapter: AdapterSettings
    public var devices: [DeviceSettings]
    /// Actions at times after the simulator started, in time order.
    public var timeline: [TimedAction]

    public init(seed: UInt64 = 1, adapter: AdapterSettings = AdapterSettings(), devices: [DeviceSettings] = [],
                timeline: [TimedAction] = []) {
        self.seed = seed
        self.adapter = adapter
        self.devices = devices
        self.timeline = timeline.sorted { $0.at < $1.at }
    }
}

/// What bluetoothd keeps of a device's GATT database after a disconnection (main.conf `[GATT] Cache`).
public enum GATTCachePolicy: String, Sendable, CaseIterable {
    /// BlueZ's default: objects stay exported while disconnected, notify sessions resume on reconnection.
    case always
    /// Only for paired devices.
    case yes
    /// Objects are removed on every disconnection.
    case no
}

public struct AdapterSettings: Sendable {
    public var address: BluetoothAddress
    /// The adapter's Name (and initial Alias).
    public var name: String
    public var powered: Bool
    public var gattCache: GATTCachePolicy
    /// How long BlueZ waits after Disconnect before dropping the link (`DISCONNECT_TIMER`, 2 s in 5.66).
    public var disconnectTimer: Duration
    /// How long an unpaired, never-connected device stays after it was last seen (main.conf `TemporaryTimeout`).
    public var temporaryTimeout: Duration
    /// How long Connect waits for a device that does not advertise before failing.
    public var connectTimeout: Duration
    /// Simultaneous LE links the controller allows; one more attempt fails.
    public var maxConnections: Int

    public init(address: BluetoothAddress = BluetoothAddress("00:1A:7D:DA:71:13")!, name: String = "wear2mqtt-sim",
                powered: Bool = true, gattCache: GATTCachePolicy = .always, disconnectTimer: Duration = .seconds(2),
                temporaryTimeout: Duration = .seconds(30), connectTimeout: Duration = .seconds(20), maxConnections: Int = 7) {
        self.address = address
        self.name = name
        self.powered = powered
        self.gattCache = gattCache
        self.disconnectTimer = disconnectTimer
        self.temporaryTimeout = temporaryTimeout
        self.connectTimeout = connectTimeout
        self.maxConnections = maxConnections
    }
}

/// One simulated device in range: its kind and kind-specific options, and how it behaves on the radio.
public struct DeviceSettings: Sendable {
    public var kind: SimulatedDeviceKind
    public var address: BluetoothAddress
    /// "public" or "random" (BlueZ's AddressType).
    public var addressType: String
    /// Overrides the kind's default name (advertised and GAP).
    public var name: String?
    /// Overrides the kind's typical RSSI.
    public var rssi: Int?
    public var txPower: Int?
    public var advertising: Bool
    public var advertisingInterval: Duration
    /// From Connect until the link is up (LE connection setup and MTU exchange).
    public var connectDelay: Duration
    /// From the link being up until services are resolved (primary service and characteristic discovery).
    public var serviceDiscoveryTime: Duration
    /// One ATT request and its response.
    public var attRoundTrip: Duration
    /// The ATT MTU the device supports; BlueZ asks for 517.
    public var mtu: Int
    /// Paired and bonded before the simulation starts: BlueZ knows it from its storage.
    public var paired: Bool
    public var trusted: Bool
    public var pairing: PairingMethodSetting
    public var passkey: UInt32
    public var manufacturerData: [UInt16: [UInt8]]?
    public var serviceData: [BluetoothUUID: [UInt8]]?
    /// Kind-specific options (see each kind's documentation).
    public var options: [String: SimulationOptionValue]

    public init(kind: SimulatedDeviceKind, address: BluetoothAddress, addressType: String = "random", name: String? = nil,
                rssi: Int? = nil, txPower: Int? = nil, advertising: Bool = true, advertisingInterval: Duration = .seconds(1),
                connectDelay: Duration = .milliseconds(150), serviceDiscoveryTime: Duration = .milliseconds(100),
                attRoundTrip: Duration = .milliseconds(10), mtu: Int = 247, paired: Bool = false, trusted: Bool = false,
                pairing: PairingMethodSetting = .justWorks, passkey: UInt32 = 123456,
                manufacturerData: [UInt16: [UInt8]]? = nil, serviceData: [BluetoothUUID: [UInt8]]? = nil,
                options: [String: SimulationOptionValue] = [:]) {
        self.kind = kind
        self.address = address
        self.addressType = addressType
        self.name = name
        self.rssi = rssi
        self.txPower = txPower
        self.advertising = advertising
        self.advertisingInterval = advertisingInterval
        self.connectDelay = connectDelay
        self.serviceDiscoveryTime = serviceDiscoveryTime
        self.attRoundTrip = attRoundTrip
        self.mtu = mtu
        self.paired = paired
        self.trusted = trusted
        self.pairing = pairing
        self.passkey = passkey
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.options = options
    }

    /// The settings of the companion this device's peripheral serves at `address` (its DFU bootloader): the same
    /// radio and timing, nothing the scenario said about the device itself (name, advertising data, bonding,
    /// options), and silent until the peripheral switches to it.
    func companionSettings(at address: BluetoothAddress) -> DeviceSettings {
        DeviceSettings(kind: kind, address: address, addressType: addressType, rssi: rssi, advertising: false,
                       advertisingInterval: advertisingInterval, connectDelay: connectDelay,
                       serviceDiscoveryTime: serviceDiscoveryTime, attRoundTrip: attRoundTrip, mtu: mtu)
    }

    /// The device's configuration for its kind, with a seed from the scenario's and the address.
    func configuration(scenarioSeed: UInt64) -> SimulatedDeviceConfiguration {
        SimulatedDeviceConfiguration(name: name, seed: SimulationRandom.seed(from: address.description, base: scenarioSeed),
                                     options: options, address: address.description)
    }
}

/// How a device pairs, as a scenario names it (see `PairingMethod`).
public enum PairingMethodSetting: String, Sendable, CaseIterable {
    case justWorks = "just_works"
    case requestPasskey = "request_passkey"
    case displayPasskey = "display_passkey"
    case confirm

    var method: PairingMethod {
        switch self {
        case .justWorks: .justWorks
        case .requestPasskey: .requestPasskey
        case .displayPasskey: .displayPasskey
        case .confirm: .confirm
        }
    }
}

public struct TimedAction: Sendable {
    /// Time after the simulator started.
    public var at: Duration
    public var action: SimulatorAction

    public init(at: Duration, _ action: SimulatorAction) {
        self.at = at
        self.action = action
    }
}

/// A fault or a device-side event, injected by the scenario's timeline or the control interface.
public enum SimulatorAction: Sendable, Equatable {
    /// The device drops the link (out of range, battery pulled): no Disconnect call, supervision timeout.
    case dropLink(BluetoothAddress)
    /// The next `count` connection attempts fail with `error`.
    case refuseConnects(BluetoothAddress, count: Int, error: BlueZErrorReply)
    case setAdvertising(BluetoothAddress, Bool)
    /// Every method of this device (nil: the adapter) answers this much later.
    case setLatency(BluetoothAddress?, Duration)
    /// The next call of `method` on this device or its GATT objects (nil: the adapter, AgentManager) fails.
    case failNextCall(BluetoothAddress?, method: String, error: BlueZErrorReply)
    /// The adapter is switched off or on (as by rfkill or a controller reset).
    case setPowered(Bool)
    case deviceEvent(BluetoothAddress, DeviceEvent)
    /// The device's signal strength changes (it moved).
    case setRSSI(BluetoothAddress, Int)
    /// Every advertisement is heard at the level ± uniform noise of `amplitude` dB from a stream seeded with `seed`;
    /// amplitude 0: back to the built-in ±2 dB fading.
    case setRSSINoise(BluetoothAddress, amplitude: Int, seed: UInt64)
    /// The scanner goes deaf: discovery stays on (Discovering true) but no advertisement reaches BlueZ any more (no
    /// new device, no RSSI, name or advertising-data change) until `clearedBy` (`DeafScannerCure`).
    case deafenScanner(clearedBy: DeafScannerCure)
    /// The controller will not start a scan: a discovery under way ends, every StartDiscovery answers InProgress and
    /// Discovering stays false, until the adapter is powered off (and on).
    case stickDiscovery
    /// The controller's index goes away (a USB dongle unplugged, a reset that removes the index): every link drops as
    /// at power-off, discovery ends, and the device objects then the adapter object are removed from the bus.
    case removeAdapter
    /// The controller comes back: the adapter object (powered on, not discovering) and the paired devices' objects;
    /// other devices reappear when a discovery sights them.
    case restoreAdapter
}

/// Where devices' companions (`SimulatedCompanion`: a band's DFU bootloader) go on the air, checked against the
/// scenario's devices: a companion's address must not be another device's, nor another companion's.
struct CompanionPlacement: Equatable {
    /// The index of the device whose companion this is.
    var host: Int
    var address: BluetoothAddress
    var kind: String

    init(host: Int, hostAddress: BluetoothAddress, offset: UInt8, kind: String) {
        self.host = host
        address = hostAddress.addingToLastByte(offset)
        self.kind = kind
    }

    /// The first clash: the index of the device (or nil: another companion) whose address `placement` takes.
    static func firstClash(_ placements: [CompanionPlacement], devices: [BluetoothAddress])
        -> (placement: CompanionPlacement, device: Int?)?
    {
        for (index, placement) in placements.enumerated() {
            if let device = devices.firstIndex(of: placement.address) { return (placement, device) }
            if placements[..<index].contains(where: { $0.address == placement.address }) { return (placement, nil) }
        }
        return nil
    }

    /// Why `placement` cannot go where it would, for a scenario error.
    static func reason(_ placement: CompanionPlacement, takes device: Int?) -> String {
        let what = device.map { "devices[\($0)]" } ?? "another device's companion"
        return "\(placement.address) is where devices[\(placement.host)]'s \(placement.kind) advertises; \(what) "
            + "cannot use it too"
    }
}
