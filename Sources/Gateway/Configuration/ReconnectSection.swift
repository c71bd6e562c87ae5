extension Configuration {
    /// `mqtt.reconnect:` — the exponential back-off between attempts to reach the broker.
    public struct ReconnectSection: Sendable, Equatable, Codable, ConfigurationSection {
        /// Delay before the first retry, in seconds; doubles per failure up to ``maxDelaySeconds``.
        public var minDelaySeconds = 0.5
        /// 1 s by default: a broker that comes back is reached within a second of its return, whatever the
        /// outage's length (an attempt at a broker that is away costs a refused TCP connection); jitter (half to all of
        /// the delay) keeps a fleet of gateways from reconnecting in lockstep. A larger value trades that for fewer
        /// attempts.
        public var maxDelaySeconds = 1.0

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
