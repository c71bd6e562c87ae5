extension Configuration {
    /// `hrv:` — heart-rate variability on `<base>/<id>/sensor/hrv` for every device that sends beat intervals
    /// (docs/hrv.md). On by default: it costs nothing for a device without beats, and a strap's RR intervals are
    /// what most people buy a chest strap for.
    public struct HeartRateVariabilitySection: Sendable, Equatable, Codable, ConfigurationSection {
        public var enabled = true
        /// The sliding window the measures describe. 30 s is the shortest over which SDNN is still meaningful;
        /// 300 s is the Task Force's standard short-term recording.
        public var windowSeconds = 60
        /// Seconds between publications.
        public var intervalSeconds = 10

        public init() {}

        public static let windowRange = 30...300
        public static let intervalRange = 1...3600

        enum CodingKeys: String, CodingKey, CaseIterable {
            case enabled
            case windowSeconds = "window_s"
            case intervalSeconds = "interval_s"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = Self()
            enabled = try container.value(.enabled, default: defaults.enabled)
            windowSeconds = try container.integer(.windowSeconds, default: defaults.windowSeconds, in: Self.windowRange)
            intervalSeconds = try container.integer(.intervalSeconds, default: defaults.intervalSeconds, in: Self.intervalRange)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(enabled, forKey: .enabled)
            try container.encode(windowSeconds, forKey: .windowSeconds)
            try container.encode(intervalSeconds, forKey: .intervalSeconds)
        }
    }
}
