import MQTT
import Wearables

/// The facts the gateway already keeps, read once per scrape: what `GatewayMetrics` exports besides the command
/// durations it times itself. Nothing here is counted for metrics alone except the samples per sensor.
public struct MetricsSnapshot: Sendable, Equatable {
    /// One managed device: only these get a `device` label, so the label set stays as small as the device list.
    public struct Device: Sendable, Equatable {
        public var id: String
        public var connected: Bool
        /// dBm, as BlueZ last reported it.
        public var rssi: Double?
        /// Percent, as the device reports it (0–100).
        public var batteryPercent: Double?
        /// A firmware update's progress, 0–1, while one runs.
        public var firmwareUpdateProgress: Double?
        public var samples: [SensorKind: UInt64]

        public init(id: String, connected: Bool, rssi: Double? = nil, batteryPercent: Double? = nil,
                    firmwareUpdateProgress: Double? = nil, samples: [SensorKind: UInt64] = [:]) {
            self.id = id
            self.connected = connected
            self.rssi = rssi
            self.batteryPercent = batteryPercent
            self.firmwareUpdateProgress = firmwareUpdateProgress
            self.samples = samples
        }
    }

    public var mqtt: MQTTClientStatistics
    public var devices: [Device]
    public var cpuSeconds: Double?
    public var residentBytes: Int64?
    /// Failed calls to BlueZ by D-Bus error name, since the start.
    public var dbusErrors: [String: UInt64]
    /// The web interface (`frontend.enabled`): browsers open now, and messages dropped for slow ones since the start.
    public var frontend: (browsers: Int, dropped: Int)?
    /// Each watched radio by id: whether its watchdog says it works (`RadioStatus.State.ok`).
    public var radiosUp: [String: Bool] = [:]

    public static func == (a: MetricsSnapshot, b: MetricsSnapshot) -> Bool {
        a.mqtt == b.mqtt && a.devices == b.devices && a.cpuSeconds == b.cpuSeconds && a.residentBytes == b.residentBytes
            && a.dbusErrors == b.dbusErrors && a.frontend?.browsers == b.frontend?.browsers && a.frontend?.dropped == b.frontend?.dropped
            && a.radiosUp == b.radiosUp
    }

    public init(mqtt: MQTTClientStatistics, devices: [Device], cpuSeconds: Double? = nil, residentBytes: Int64? = nil,
                dbusErrors: [String: UInt64] = [:], frontend: (browsers: Int, dropped: Int)? = nil) {
        self.mqtt = mqtt
        self.frontend = frontend
        self.devices = devices
        self.dbusErrors = dbusErrors
        self.cpuSeconds = cpuSeconds
        self.residentBytes = residentBytes
    }
}

extension MetricsSnapshot.Device {
    /// RSSI, battery and update progress from the device's retained state document (`rssi`, `battery`,
    /// `update.progress` in percent while `update.state` is `updating`).
    init(id: String, connected: Bool, document: DeviceStateDocument, samples: [SensorKind: UInt64]) {
        var progress: Double?
        if case .object(let update)? = document.fields["update"], let percent = update["progress"]?.number,
           update["state"]?.text == "updating" {
            progress = min(1, max(0, percent / 100))
        }
        self.init(id: id, connected: connected, rssi: document.fields["rssi"]?.number,
                  batteryPercent: document.fields["battery"]?.number, firmwareUpdateProgress: progress, samples: samples)
    }
}
