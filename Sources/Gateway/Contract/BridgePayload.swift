import MQTT
import Wearables

/// One entry of the retained `bridge/devices` array.
public struct BridgeDeviceEntry: Sendable, Equatable {
    public var id: String
    /// The friendly name, when one was given.
    public var name: String?
    public var vendor: String?
    public var model: String?
    public var address: String
    public var driver: String
    public var capabilities: [String]
    public var paired: Bool
    public var connected: Bool
    /// In a site of gateways (docs/roaming.md): the gateway that owns the device; nil outside a site.
    public var gateway: String?
    /// While connected: the radio holding the link (the adapter's id, or an ESPHome proxy's name; docs/radios.md).
    public var radio: String?

    public init(id: String, name: String? = nil, vendor: String? = nil, model: String? = nil, address: String,
                driver: String, capabilities: [String] = [], paired: Bool = false, connected: Bool = false,
                gateway: String? = nil, radio: String? = nil) {
        self.radio = radio
        self.id = id
        self.name = name
        self.vendor = vendor
        self.model = model
        self.address = address
        self.driver = driver
        self.capabilities = capabilities
        self.paired = paired
        self.connected = connected
        self.gateway = gateway
    }
}

/// What happened, for `bridge/event`.
public struct BridgeEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case deviceFound = "device_found"
        case deviceConnected = "device_connected"
        case deviceDisconnected = "device_disconnected"
        case devicePaired = "device_paired"
        case deviceAdded = "device_added"
        case deviceRemoved = "device_removed"
        case adapterChanged = "adapter_changed"
        /// The radio watchdog's news: a radio stalled, a step taken, back to work (docs/radios.md).
        case radioChanged = "radio_changed"
    }

    public var kind: Kind
    public var data: [String: DeviceValue]

    public init(_ kind: Kind, data: [String: DeviceValue] = [:]) {
        self.kind = kind
        self.data = data
    }
}

/// The periodic `bridge/health` report, from plain numbers the gateway gathers.
public struct HealthReport: Sendable, Equatable {
    public struct MQTTStatus: Sendable, Equatable {
        public var connected: Bool
        /// Non-durable messages waiting for the broker.
        public var queued: Int
        /// Non-durable messages dropped (oldest first) while the broker was away, since start.
        public var dropped: UInt64
        /// Incoming messages (requests) dropped because they came faster than the gateway took them, since start.
        public var incomingDropped: UInt64
        /// Incoming messages whose payload was too large to keep (answered `INVALID_PAYLOAD`), since start.
        public var incomingOversized: UInt64
        /// Times reading paused for a full incoming buffer, and pauses the keepalive bound cut short, since start.
        public var incomingPauses: UInt64 = 0
        public var incomingPausesCutShort: UInt64 = 0
        /// Durable messages on disk awaiting the broker's acknowledgement.
        public var spoolPending: Int
        public var spoolBytes: Int
        /// Durable messages the spool could not store (full, or a full disk), since start.
        public var spoolFailures: UInt64
        public var published: UInt64

        public init(connected: Bool = false, queued: Int = 0, dropped: UInt64 = 0, incomingDropped: UInt64 = 0,
                    incomingOversized: UInt64 = 0, spoolPending: Int = 0, spoolBytes: Int = 0, spoolFailures: UInt64 = 0,
                    published: UInt64 = 0) {
            self.connected = connected
            self.queued = queued
            self.dropped = dropped
            self.incomingDropped = incomingDropped
            self.incomingOversized = incomingOversized
            self.spoolPending = spoolPending
            self.spoolBytes = spoolBytes
            self.spoolFailures = spoolFailures
            self.published = published
        }

        public init(_ statistics: MQTTClientStatistics) {
            self.init(connected: statistics.connected, queued: statistics.offlineQueued, dropped: statistics.offlineDropped,
                      incomingDropped: statistics.incomingDropped, incomingOversized: statistics.incomingOversized, spoolPending: statistics.spoolPending, spoolBytes: statistics.spoolBytes,
                      spoolFailures: statistics.spoolFailures,
                      published: statistics.published)
            incomingPauses = statistics.incomingPauses
            incomingPausesCutShort = statistics.incomingPausesCutShort
        }
    }

    public struct Device: Sendable, Equatable {
        /// Messages published for this device per second, over the last report interval.
        public var messagesPerSecond: Double
        public var connected: Bool
        /// Commands waiting in the device's queue.
        public var queuedCommands: Int

        public init(messagesPerSecond: Double, connected: Bool, queuedCommands: Int = 0) {
            self.messagesPerSecond = messagesPerSecond
            self.connected = connected
            self.queuedCommands = queuedCommands
        }
    }

    public var uptimeSeconds: Int64
    /// Resident set size; `nil` when the platform does not tell.
    public var residentBytes: Int64?
    public var mqtt: MQTTStatus
    public var devices: [String: Device]
    /// The web interface, when enabled: browsers open, and messages dropped for slow ones since the start.
    public var frontend: Frontend?
    /// Each radio's watchdog status by id (`GatewayCore.radioEntry`); empty without the watchdog.
    public var radios: [String: [String: DeviceValue]] = [:]

    public struct Frontend: Sendable, Equatable {
        public var browsers: Int
        public var dropped: Int

        public init(browsers: Int, dropped: Int) {
            self.browsers = browsers
            self.dropped = dropped
        }
    }

    public init(uptimeSeconds: Int64, residentBytes: Int64?, mqtt: MQTTStatus, devices: [String: Device] = [:],
                frontend: Frontend? = nil) {
        self.uptimeSeconds = uptimeSeconds
        self.residentBytes = residentBytes
        self.mqtt = mqtt
        self.devices = devices
        self.frontend = frontend
    }
}

/// Payloads of the bridge's topics.
public enum BridgePayload {
    /// `bridge/devices`: the array sorted by id, each entry's keys in the contract's order; unknown name,
    /// vendor and model are `null` so every entry has the same keys. `definitions`: each driver's description as
    /// JSON (`DriverDescription.deviceValue`), written as the entry's `definition` (a gateway's entries for its site
    /// leave them out: every gateway has the same drivers, and the referee adds them).
    public static func devices(_ entries: [BridgeDeviceEntry], definitions: [String: DeviceValue] = [:]) -> [UInt8] {
        var writer = JSONWriter(capacity: 64 + entries.count * 192)
        writer.beginArray()
        for entry in entries.sorted(by: { $0.id < $1.id }) {
            writer.beginObject()
            writer.field("id", entry.id)
            writer.key("name")
            writer.value(entry.name.map(DeviceValue.text) ?? .null)
            writer.key("vendor")
            writer.value(entry.vendor.map(DeviceValue.text) ?? .null)
            writer.key("model")
            writer.value(entry.model.map(DeviceValue.text) ?? .null)
            writer.field("address", entry.address)
            writer.field("driver", entry.driver)
            writer.key("capabilities")
            writer.beginArray()
            for capability in entry.capabilities { writer.string(capability) }
            writer.endArray()
            writer.field("paired", entry.paired)
            writer.field("connected", entry.connected)
            if let gateway = entry.gateway { writer.field("gateway", gateway) }
            if let radio = entry.radio { writer.field("radio", radio) }
            if let definition = definitions[entry.driver] {
                writer.key("definition")
                writer.value(definition)
            }
            writer.endObject()
        }
        writer.endArray()
        return writer.bytes
    }

    /// `bridge/event`: `{"type":…,"data":{…}}`.
    public static func event(_ event: BridgeEvent) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("type", event.kind.rawValue)
        writer.key("data")
        writer.value(.object(event.data))
        writer.endObject()
        return writer.bytes
    }

    /// `bridge/health`: `{"uptime_s","rss_bytes","mqtt":{…},"devices":{<id>:{…}}}`, devices sorted by id.
    public static func health(_ report: HealthReport) -> [UInt8] {
        var writer = JSONWriter(capacity: 256 + report.devices.count * 96)
        writer.beginObject()
        writer.field("uptime_s", report.uptimeSeconds)
        writer.key("rss_bytes")
        if let resident = report.residentBytes { writer.integer(resident) } else { writer.null() }
        writer.key("mqtt")
        writer.beginObject()
        writer.field("connected", report.mqtt.connected)
        writer.field("queued", report.mqtt.queued)
        writer.field("dropped", Int64(clamping: report.mqtt.dropped))
        writer.field("incoming_dropped", Int64(clamping: report.mqtt.incomingDropped))
        writer.field("incoming_oversized", Int64(clamping: report.mqtt.incomingOversized))
        writer.field("incoming_pauses", Int64(clamping: report.mqtt.incomingPauses))
        writer.field("incoming_pauses_cut_short", Int64(clamping: report.mqtt.incomingPausesCutShort))
        writer.field("spool_pending", report.mqtt.spoolPending)
        writer.field("spool_bytes", report.mqtt.spoolBytes)
        writer.field("spool_failures", Int64(clamping: report.mqtt.spoolFailures))
        writer.field("published", Int64(clamping: report.mqtt.published))
        writer.endObject()
        writer.key("devices")
        writer.beginObject()
        for id in report.devices.keys.sorted() {
            let device = report.devices[id]!
            writer.key(id)
            writer.beginObject()
            writer.field("messages_per_s", device.messagesPerSecond)
            writer.field("connected", device.connected)
            writer.field("queued_commands", device.queuedCommands)
            writer.endObject()
        }
        writer.endObject()
        if let frontend = report.frontend {
            writer.key("frontend")
            writer.beginObject()
            writer.field("browsers", frontend.browsers)
            writer.field("dropped", frontend.dropped)
            writer.endObject()
        }
        if !report.radios.isEmpty {
            writer.key("radios")
            writer.value(.object(report.radios.mapValues(DeviceValue.object)))
        }
        writer.endObject()
        return writer.bytes
    }
}
