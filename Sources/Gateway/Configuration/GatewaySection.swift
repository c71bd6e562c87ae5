import Logging

extension Configuration {
    /// `gateway:` — who this gateway is, where it keeps state, and how it logs.
    public struct GatewaySection: Sendable, Equatable, Codable, ConfigurationSection {
        /// Names this gateway in `bridge/info` and in the derived MQTT client id. One topic segment, 1…64
        /// characters.
        public var id: String = "wear2mqtt"
        /// Where this gateway stands, as a site's `presence` messages name it (docs/roaming.md); one topic segment.
        public var room: String?
        /// Directory for the durable spool and the device registry. Created by the daemon, not by loading.
        public var stateDirectory: String = "/var/lib/wear2mqtt"
        public var logLevel: Logger.Level = .info
        public var logFormat: LogFormat = .logfmt
        /// Seconds between `bridge/health` reports; `bridge/request/options` changes it while running.
        public var healthIntervalSeconds = 60

        public init() {}

        /// What `health_interval_s` may be, in config.yaml and over MQTT.
        public static let healthIntervalRange = 5...86_400

        enum CodingKeys: String, CodingKey, CaseIterable {
            case id
            case room
            case stateDirectory = "state_dir"
            case logLevel = "log_level"
            case logFormat = "log_format"
            case healthIntervalSeconds = "health_interval_s"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = Self()
            id = try container.value(.id, default: defaults.id)
            if let problem = ConfigurationRules.segmentProblem(id, maxLength: 64) {
                throw container.invalid(.id, problem)
            }
            room = try container.value(.room, default: defaults.room)
            if let room, let problem = ConfigurationRules.segmentProblem(room, maxLength: 64) {
                throw container.invalid(.room, problem)
            }
            stateDirectory = try container.value(.stateDirectory, default: defaults.stateDirectory)
            if stateDirectory.isEmpty {
                throw container.invalid(.stateDirectory, "must not be empty")
            }
            logLevel = try container.choice(.logLevel, default: defaults.logLevel)
            logFormat = try container.choice(.logFormat, default: defaults.logFormat)
            healthIntervalSeconds = try container.integer(.healthIntervalSeconds, default: defaults.healthIntervalSeconds,
                                                          in: Self.healthIntervalRange)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(room, forKey: .room)
            try container.encode(stateDirectory, forKey: .stateDirectory)
            try container.encode(logLevel.rawValue, forKey: .logLevel)
            try container.encode(logFormat.rawValue, forKey: .logFormat)
            try container.encode(healthIntervalSeconds, forKey: .healthIntervalSeconds)
        }
    }
}
