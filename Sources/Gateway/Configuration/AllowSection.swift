extension Configuration {
    /// `allow:` — commands that destroy data or replace firmware are refused (`FORBIDDEN`) unless enabled here.
    public struct AllowSection: Sendable, Equatable, Codable, ConfigurationSection {
        public var clearData = false
        public var factoryReset = false
        public var dfu = false

        public init() {}

        enum CodingKeys: String, CodingKey, CaseIterable {
            case clearData = "clear_data"
            case factoryReset = "factory_reset"
            case dfu
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            clearData = try container.value(.clearData, default: false)
            factoryReset = try container.value(.factoryReset, default: false)
            dfu = try container.value(.dfu, default: false)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(clearData, forKey: .clearData)
            try container.encode(factoryReset, forKey: .factoryReset)
            try container.encode(dfu, forKey: .dfu)
        }
    }
}
