extension Configuration {
    /// `dfu:` — where firmware packages for `request/dfu` come from. A request names a file relative to `dir`
    /// and can reach nothing outside it; `allow.dfu` must also be on.
    public struct DFUSection: Sendable, Equatable, Codable, ConfigurationSection {
        /// The folder of firmware packages (Nordic DFU zips).
        public var directory = "/var/lib/wear2mqtt/firmware"
        /// The largest package accepted, in MiB (fractions allowed): checked before the file is read.
        public var maxMegabytes = 16.0

        public init() {}

        /// ``maxMegabytes`` in bytes.
        public var maxBytes: Int { Int((maxMegabytes * 1_048_576).rounded(.down)) }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case directory = "dir"
            case maxMegabytes = "max_mb"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = Self()
            directory = try container.value(.directory, default: defaults.directory)
            if directory.isEmpty { throw container.invalid(.directory, "must not be empty") }
            maxMegabytes = try container.number(
                .maxMegabytes, default: defaults.maxMegabytes, rule: "greater than 0 and at most 1024"
            ) { $0 > 0 && $0 <= 1024 }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(directory, forKey: .directory)
            try container.encode(DecimalNumber(maxMegabytes), forKey: .maxMegabytes)
        }
    }
}
