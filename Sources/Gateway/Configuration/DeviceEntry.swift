import Wearables

extension Configuration {
    /// One entry of `devices:` — a wearable the gateway connects to without being asked.
    public struct DeviceEntry: Sendable, Equatable, Codable, ConfigurationSection {
        /// Bluetooth address, upper case.
        public var address: String
        /// Friendly name used as the device id in topics; the rules of ``DeviceIdentifier`` (one topic level, at most
        /// 64 bytes, no reserved word).
        public var name: String?
        /// Driver to use instead of detecting one from advertised services; one topic segment.
        public var driver: String?
        /// A `request/configure` payload applied on every connection (sensors, gestures, streams); the driver
        /// checks it against the device when it first connects.
        public var configure: [String: DeviceValue]?
        /// `device/options` set here (`batch_ms`, `qos`, `retain`, `notify`); what it names wins over what was
        /// set over MQTT before a restart, what it leaves out keeps that.
        public var options: DeviceOptionsChange?

        public init(address: String, name: String? = nil, driver: String? = nil, configure: [String: DeviceValue]? = nil,
                    options: DeviceOptionsChange? = nil) {
            self.address = address
            self.name = name
            self.driver = driver
            self.configure = configure
            self.options = options
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case address
            case name
            case driver
            case configure
            case options
        }

        static var nestedSchemas: [String: ConfigurationSchema] {
            [CodingKeys.configure.stringValue: .document, CodingKeys.options.stringValue: .document]
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard let text = try container.decodeIfPresent(String.self, forKey: .address) else {
                throw InvalidConfigurationValue(
                    keyPath: ConfigurationKeyPath(codingPath: container.codingPath),
                    message: "needs an address (AA:BB:CC:DD:EE:FF)"
                )
            }
            guard let address = ConfigurationRules.normalisedBluetoothAddress(text) else {
                throw container.invalid(.address, "must be a Bluetooth address like AA:BB:CC:DD:EE:FF, got \"\(text)\"")
            }
            self.address = address
            name = try container.decodeIfPresent(String.self, forKey: .name)
            if let name, let problem = DeviceIdentifier.problem(name) {
                throw container.invalid(.name, problem)
            }
            driver = try container.decodeIfPresent(String.self, forKey: .driver)
            if let driver, let problem = ConfigurationRules.segmentProblem(driver) {
                throw container.invalid(.driver, problem)
            }
            configure = try container.decodeIfPresent([String: DeviceValue].self, forKey: .configure)
            if let fields = try container.decodeIfPresent([String: DeviceValue].self, forKey: .options) {
                // The same rules and sentences as `device/options` over MQTT.
                do throws(CommandError) {
                    options = try DeviceOptionsChange(RequestReader(fields))
                } catch {
                    throw container.invalid(.options, error.message)
                }
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(address, forKey: .address)
            try container.encode(name, forKey: .name)
            try container.encode(driver, forKey: .driver)
            try container.encodeIfPresent(configure, forKey: .configure)
            try container.encodeIfPresent(options?.object, forKey: .options)
        }
    }
}
