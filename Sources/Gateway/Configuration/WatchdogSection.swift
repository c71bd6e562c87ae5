extension Configuration {
    /// `watchdog:` — the radio watchdog (docs/radios.md, "Watchdog"): each radio looked at every few seconds, a stalled
    /// one restarted step by step and reported. On by default: a radio that stops silently is the failure people meet.
    public struct WatchdogSection: Sendable, Equatable, Codable, ConfigurationSection {
        public var enabled = true
        /// No advertisement for this long while discovering, after hearing some lately: the scanner is deaf.
        public var silenceSeconds = 90
        /// Discovery wanted but not running, or the adapter off, for this long before a step.
        public var graceSeconds = 15
        /// Seconds between two looks at the radios.
        public var intervalSeconds = 5

        public init() {}

        enum CodingKeys: String, CodingKey, CaseIterable {
            case enabled
            case silenceSeconds = "silence_s"
            case graceSeconds = "grace_s"
            case intervalSeconds = "interval_s"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = Self()
            enabled = try container.value(.enabled, default: defaults.enabled)
            silenceSeconds = try container.integer(.silenceSeconds, default: defaults.silenceSeconds, in: 5...3600)
            graceSeconds = try container.integer(.graceSeconds, default: defaults.graceSeconds, in: 1...600)
            intervalSeconds = try container.integer(.intervalSeconds, default: defaults.intervalSeconds, in: 1...60)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(enabled, forKey: .enabled)
            try container.encode(silenceSeconds, forKey: .silenceSeconds)
            try container.encode(graceSeconds, forKey: .graceSeconds)
            try container.encode(intervalSeconds, forKey: .intervalSeconds)
        }

        /// The watchdog's settings from these.
        var settings: RadioWatchdog.Settings {
            var settings = RadioWatchdog.Settings()
            settings.silence = .seconds(silenceSeconds)
            settings.grace = .seconds(graceSeconds)
            return settings
        }
    }
}
