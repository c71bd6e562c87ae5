extension Configuration {
    /// `homeassistant:` — MQTT discovery for Home Assistant (docs/home-assistant.md). On by default: a user who
    /// does not run Home Assistant pays a few retained messages; one who does gets every wearable without YAML.
    public struct HomeAssistantSection: Sendable, Equatable, Codable, ConfigurationSection {
        public var enabled = true
        /// Home Assistant's `discovery_prefix` (the MQTT integration's option).
        public var discoveryPrefix = "homeassistant"
        /// Where Home Assistant announces `online` after it starts: discovery and states are published again.
        public var statusTopic = "homeassistant/status"
        /// The most often an entity fed from a fast stream changes (heart rate at every beat, temperature at 4 Hz):
        /// Home Assistant's recorder keeps every state, so entities get at most one value per interval.
        public var stateIntervalSeconds = 5
        /// Seconds after which Home Assistant shows a sensor `unavailable` when no value came; 0: never (the
        /// device's availability already says when it is gone).
        public var expireAfterSeconds = 0

        public init() {}

        enum CodingKeys: String, CodingKey, CaseIterable {
            case enabled
            case discoveryPrefix = "discovery_prefix"
            case statusTopic = "status_topic"
            case stateIntervalSeconds = "state_interval_s"
            case expireAfterSeconds = "expire_after_s"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = Self()
            enabled = try container.value(.enabled, default: defaults.enabled)
            discoveryPrefix = try container.value(.discoveryPrefix, default: defaults.discoveryPrefix)
            if let problem = ConfigurationRules.baseTopicProblem(discoveryPrefix) {
                throw container.invalid(.discoveryPrefix, problem)
            }
            statusTopic = try container.value(.statusTopic, default: defaults.statusTopic)
            if let problem = ConfigurationRules.baseTopicProblem(statusTopic) {
                throw container.invalid(.statusTopic, problem)
            }
            stateIntervalSeconds = try container.integer(.stateIntervalSeconds, default: defaults.stateIntervalSeconds, in: 1...3600)
            expireAfterSeconds = try container.integer(.expireAfterSeconds, default: defaults.expireAfterSeconds, in: 0...86_400)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(enabled, forKey: .enabled)
            try container.encode(discoveryPrefix, forKey: .discoveryPrefix)
            try container.encode(statusTopic, forKey: .statusTopic)
            try container.encode(stateIntervalSeconds, forKey: .stateIntervalSeconds)
            try container.encode(expireAfterSeconds, forKey: .expireAfterSeconds)
        }
    }
}
