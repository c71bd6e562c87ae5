/// A durable record (fitness history, epochs): published at least once, never lost, with a stable `id` so
/// consumers can drop a repeat.
public struct FitnessRecord: Sendable, Equatable {
    /// `steps`, `sleep`, `heart_rate`, `spo2`, `activity`, `epoch`: the topic segment of `fitness/<kind>`.
    public var kind: String
    /// Stable across re-downloads of the same record.
    public var id: String
    public var timestamp: Int64
    public var fields: [String: DeviceValue]

    public init(kind: String, id: String, timestamp: Int64, fields: [String: DeviceValue]) {
        self.kind = kind
        self.id = id
        self.timestamp = timestamp
        self.fields = fields
    }
}

/// Progress of a long operation (sync, firmware update), mirrored in the device state.
public struct OperationProgress: Sendable, Equatable {
    /// `idle`, `scheduled`, `syncing`, `updating`, … as the contract names them.
    public var state: String
    /// 0…100, when known.
    public var percent: Double?
    public var remainingSeconds: Double?
    public var lastTimestamp: Int64?

    public init(state: String, percent: Double? = nil, remainingSeconds: Double? = nil, lastTimestamp: Int64? = nil) {
        self.state = state
        self.percent = percent
        self.remainingSeconds = remainingSeconds
        self.lastTimestamp = lastTimestamp
    }
}

/// What a driver tells the gateway. The gateway turns each into topics and JSON; the driver knows neither.
public enum WearableEvent: Sendable, Equatable {
    /// A sensor sample: `sensor/<name>`, QoS 0.
    case sample(SensorSample)
    /// A gesture such as `double_tap`: `gesture`, QoS 1.
    case gesture(name: String, timestamp: Int64)
    /// A device-side event such as `find_phone` or `tag`: `event`, QoS 1.
    case event(name: String, timestamp: Int64, details: [String: DeviceValue])
    /// Fields of the retained device state changed (battery, firmware, serial, sensors, settings, …).
    case state([String: DeviceValue])
    /// A durable record: `fitness/<kind>`, QoS 1, spooled while the broker is away.
    case record(FitnessRecord)
    /// Progress of a sync or update, in the state under the given key (`sync`, `update`).
    case progress(key: String, OperationProgress)
}
