import Logging
import Wearables

/// `bridge/request/options` `{"options": {"log_level"?, "health_interval_s"?, "devices"?: {"<id>": {…}}}}`: what
/// may change while the gateway runs, as zigbee2mqtt's request of the same name. Every field is checked before
/// anything changes; empty `options` changes nothing and reads the current values back.
public struct BridgeOptionsChange: Sendable, Equatable {
    public var logLevel: Logger.Level?
    /// Seconds between `bridge/health` reports (`Configuration.GatewaySection.healthIntervalRange`).
    public var healthIntervalSeconds: Int?
    /// `device/options` for several devices at once, by device id.
    public var devices: [String: DeviceOptionsChange]

    public static let logLevels = Logger.Level.allCases.map(\.rawValue)

    public init(logLevel: Logger.Level? = nil, healthIntervalSeconds: Int? = nil, devices: [String: DeviceOptionsChange] = [:]) {
        self.logLevel = logLevel
        self.healthIntervalSeconds = healthIntervalSeconds
        self.devices = devices
    }

    init(_ reader: RequestReader) throws(CommandError) {
        try reader.rejectUnknownFields(allowed: ["log_level", "health_interval_s", "devices"], request: "options")
        logLevel = try reader.choice("log_level", from: Self.logLevels).flatMap(Logger.Level.init(rawValue:))
        let range = Configuration.GatewaySection.healthIntervalRange
        healthIntervalSeconds = try reader.integer("health_interval_s", in: Int64(range.lowerBound)...Int64(range.upperBound),
                                                   unit: " seconds").map { Int($0) }
        var devices: [String: DeviceOptionsChange] = [:]
        for (id, value) in (try reader.object("devices") ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard case .object(let options) = value else {
                throw reader.invalid("devices", "must map device ids to objects of device options", got: value)
            }
            devices[id] = try DeviceOptionsChange(RequestReader(options, path: reader.name("devices.\(id).")))
        }
        self.devices = devices
    }
}
