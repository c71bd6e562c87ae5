extension Configuration {
    /// `filter:` — which devices the gateway may manage. A device is refused when its address or driver is
    /// denied, or when an allow list is not empty and does not name it. Deny wins over allow.
    public struct FilterSection: Sendable, Equatable, Codable, ConfigurationSection {
        public var allowAddresses: [String] = []
        public var denyAddresses: [String] = []
        public var allowDrivers: [String] = []
        public var denyDrivers: [String] = []

        public init() {}

        enum CodingKeys: String, CodingKey, CaseIterable {
            case allowAddresses = "allow_addresses"
            case denyAddresses = "deny_addresses"
            case allowDrivers = "allow_drivers"
            case denyDrivers = "deny_drivers"
        }

        static var nestedSchemas: [String: ConfigurationSchema] {
            Dictionary(uniqueKeysWithValues: CodingKeys.allCases.map { ($0.stringValue, ConfigurationSchema.list(of: .value)) })
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            for key in [CodingKeys.allowAddresses, .denyAddresses] {
                let texts: [String] = try container.value(key, default: [])
                var normalised: [String] = []
                for text in texts {
                    guard let address = ConfigurationRules.normalisedBluetoothAddress(text) else {
                        throw container.invalid(key, "\"\(text)\" is not a Bluetooth address like AA:BB:CC:DD:EE:FF")
                    }
                    normalised.append(address)
                }
                if key == .allowAddresses { allowAddresses = normalised } else { denyAddresses = normalised }
            }
            allowDrivers = try container.value(.allowDrivers, default: [])
            denyDrivers = try container.value(.denyDrivers, default: [])
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(allowAddresses, forKey: .allowAddresses)
            try container.encode(denyAddresses, forKey: .denyAddresses)
            try container.encode(allowDrivers, forKey: .allowDrivers)
            try container.encode(denyDrivers, forKey: .denyDrivers)
        }
    }
}
