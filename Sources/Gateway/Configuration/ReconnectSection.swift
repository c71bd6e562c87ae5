extension Configuration {
    /// `mqtt.reconnect:` — the exponential back-off between attempts to reach the broker.
    public struct ReconnectSection: Sendable, Equatable, Codable, ConfigurationSection {
        /// Delay before the first retry, in seconds; doubles per failure up to ``maxDelaySeconds``.
        public var minDelaySeconds = 1.0
        public var maxDelaySeconds = 60.0

        public init() {}

        enum CodingKeys: String, CodingKey, CaseIterable {
            case minDelaySeconds = "min_delay_s"
            case maxDelaySeconds = "max_delay_s"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = Self()
            minDelaySeconds = try container.number(
                .minDelaySeconds, default: defaults.minDelaySeconds, rule: "greater than 0") { $0 > 0 }
            maxDelaySeconds = try container.number(
                .maxDelaySeconds, default: defaults.maxDelaySeconds, rule: "greater than 0") { $0 > 0 }
            if minDelaySeconds > maxDelaySeconds {
                throw container.invalid(
                    .minDelaySeconds,
                    "must not exceed mqtt.reconnect.max_delay_s (\(maxDelaySeconds)), got \(minDelaySeconds)"
                )
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(DecimalNumber(minDelaySeconds), forKey: .minDelaySeconds)
            try container.encode(DecimalNumber(maxDelaySeconds), forKey: .maxDelaySeconds)
        }
    }
}
