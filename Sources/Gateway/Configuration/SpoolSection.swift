extension Configuration {
    /// `mqtt.spool:` — what the gateway keeps while the broker is away.
    ///
    /// Durable (QoS 1) messages such as fitness records go to an on-disk spool under `gateway.state_dir`;
    /// sensor samples (QoS 0) go to a bounded in-memory ring that drops the oldest first.
    public struct SpoolSection: Sendable, Equatable, Codable, ConfigurationSection {
        /// Size limit of the on-disk spool in MiB (fractions allowed).
        public var maxMegabytes = 64.0
        /// Capacity of the in-memory ring of QoS 0 messages.
        public var memoryMessages = 10_000

        public init() {}

        /// ``maxMegabytes`` in bytes (1 MiB = 1,048,576 bytes).
        public var maxBytes: Int {
            Int((maxMegabytes * 1_048_576).rounded(.down))
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case maxMegabytes = "max_mb"
            case memoryMessages = "memory_messages"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = Self()
            maxMegabytes = try container.number(
                .maxMegabytes, default: defaults.maxMegabytes, rule: "greater than 0 and at most 1048576"
            ) { $0 > 0 && $0 <= 1_048_576 }
            memoryMessages = try container.integer(.memoryMessages, default: defaults.memoryMessages, in: 1...Int(Int32.max))
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(DecimalNumber(maxMegabytes), forKey: .maxMegabytes)
            try container.encode(memoryMessages, forKey: .memoryMessages)
        }
    }
}
