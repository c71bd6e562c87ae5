extension Configuration {
    /// `bluez:` — how to reach BlueZ and which controller to use.
    public struct BlueZSection: Sendable, Equatable, Codable, ConfigurationSection {
        /// The D-Bus bus BlueZ is on.
        public enum Bus: Sendable, Equatable, CustomStringConvertible {
            case system
            case session
            /// A D-Bus server address such as `unix:path=/run/wear2mqtt-sim/bus` (used by the simulator).
            case address(String)

            /// `system`, `session`, or an address with a transport and a key (`transport:key=value`).
            init?(_ text: String) {
                switch text.lowercased() {
                case "system": self = .system
                case "session": self = .session
                default:
                    guard let colon = text.firstIndex(of: ":"), colon != text.startIndex,
                        text[colon...].contains("=")
                    else { return nil }
                    self = .address(text)
                }
            }

            public var description: String {
                switch self {
                case .system: "system"
                case .session: "session"
                case .address(let address): address
                }
            }
        }

        public var bus = Bus.system
        /// `hciN` or the controller's address (upper case); `nil` uses BlueZ's first powered adapter.
        public var adapter: String?

        public init() {}

        enum CodingKeys: String, CodingKey, CaseIterable {
            case bus
            case adapter
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let text = try container.decodeIfPresent(String.self, forKey: .bus) {
                guard let bus = Bus(text) else {
                    throw container.invalid(
                        .bus, "must be system, session or a D-Bus address like unix:path=/run/bus, got \"\(text)\"")
                }
                self.bus = bus
            }
            if let text = try container.decodeIfPresent(String.self, forKey: .adapter) {
                if ConfigurationRules.isAdapterName(text) {
                    adapter = text
                } else if let address = ConfigurationRules.normalisedBluetoothAddress(text) {
                    adapter = address
                } else {
                    throw container.invalid(
                        .adapter, "must be an adapter name like hci0 or an address like AA:BB:CC:DD:EE:FF, got \"\(text)\"")
                }
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(bus.description, forKey: .bus)
            try container.encode(adapter, forKey: .adapter)
        }
    }
}
