extension Configuration {
    /// `roaming:` — this gateway as one of a site of gateways sharing the base topic (docs/roaming.md). Off by
    /// default: a lone gateway needs none of it.
    public struct RoamingSection: Sendable, Equatable, Codable, ConfigurationSection {
        public var enabled = false
        public var reportIntervalSeconds = 0.5
        public var hysteresisDecibels = 6.0
        public var hysteresisSeconds = 4.0
        public var lostAfterSeconds = 8.0
        public var releaseTimeoutSeconds = 5.0
        public var smoothing = 0.5
        /// Hand pairing keys to the next owner through the broker; only honoured over TLS with authentication.
        public var shareCredentials = false

        public init() {}

        enum CodingKeys: String, CodingKey, CaseIterable {
            case enabled
            case reportIntervalSeconds = "report_interval_s"
            case hysteresisDecibels = "hysteresis_db"
            case hysteresisSeconds = "hysteresis_s"
            case lostAfterSeconds = "lost_after_s"
            case releaseTimeoutSeconds = "release_timeout_s"
            case smoothing
            case shareCredentials = "share_credentials"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = Self()
            enabled = try container.value(.enabled, default: defaults.enabled)
            // Down to 0.05 s: a site run ten times faster than life (every roaming time divided by 10, as the
            // flapping test does) reports every 0.05 s; twenty small retained messages a second per gateway are
            // nothing to a broker.
            reportIntervalSeconds = try container.number(.reportIntervalSeconds, default: defaults.reportIntervalSeconds,
                                                         rule: "between 0.05 and 60") { (0.05...60).contains($0) }
            hysteresisDecibels = try container.number(.hysteresisDecibels, default: defaults.hysteresisDecibels,
                                                      rule: "between 0 and 40") { (0...40).contains($0) }
            hysteresisSeconds = try container.number(.hysteresisSeconds, default: defaults.hysteresisSeconds,
                                                     rule: "between 0 and 600") { (0...600).contains($0) }
            lostAfterSeconds = try container.number(.lostAfterSeconds, default: defaults.lostAfterSeconds,
                                                    rule: "between 1 and 600") { (1...600).contains($0) }
            releaseTimeoutSeconds = try container.number(.releaseTimeoutSeconds, default: defaults.releaseTimeoutSeconds,
                                                         rule: "between 0.5 and 120") { (0.5...120).contains($0) }
            smoothing = try container.number(.smoothing, default: defaults.smoothing,
                                             rule: "above 0 and at most 1") { $0 > 0 && $0 <= 1 }
            shareCredentials = try container.value(.shareCredentials, default: defaults.shareCredentials)
            guard lostAfterSeconds >= 2 * reportIntervalSeconds else {
                throw container.invalid(.lostAfterSeconds, "must be at least twice report_interval_s (\(reportIntervalSeconds)), "
                                        + "got \(lostAfterSeconds): one late report would count a gateway gone")
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(enabled, forKey: .enabled)
            try container.encode(reportIntervalSeconds, forKey: .reportIntervalSeconds)
            try container.encode(hysteresisDecibels, forKey: .hysteresisDecibels)
            try container.encode(hysteresisSeconds, forKey: .hysteresisSeconds)
            try container.encode(lostAfterSeconds, forKey: .lostAfterSeconds)
            try container.encode(releaseTimeoutSeconds, forKey: .releaseTimeoutSeconds)
            try container.encode(smoothing, forKey: .smoothing)
            try container.encode(shareCredentials, forKey: .shareCredentials)
        }

        /// The referee's settings these keys give.
        public var settings: RoamingSettings {
            RoamingSettings(reportInterval: .milliseconds(Int64(reportIntervalSeconds * 1000)),
                            hysteresisDecibels: hysteresisDecibels,
                            hysteresisDuration: .milliseconds(Int64(hysteresisSeconds * 1000)),
                            lostAfter: .milliseconds(Int64(lostAfterSeconds * 1000)),
                            releaseTimeout: .milliseconds(Int64(releaseTimeoutSeconds * 1000)), smoothing: smoothing)
        }
    }
}
