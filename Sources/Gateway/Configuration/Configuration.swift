import YAML

/// Everything wear2mqtt reads at start-up, resolved and validated.
///
/// A `Configuration` comes from ``load(path:environment:)``: the YAML file, then `WEAR2MQTT_…` environment
/// overrides, then the password. Every key is optional and has a default, so `Configuration()` is the
/// configuration of an empty file. Loading rejects unknown keys, bad values and contradictions with a
/// ``ConfigurationError`` that names the key and the line (or the environment variable); a value that
/// passed loading is within its documented range. Mutating a loaded value does not re-validate it.
///
/// `Codable` is how the sections read and write themselves; decoding one directly (not through `load` or
/// `parse`) still checks values but skips the unknown-key check, the environment and the password.
public struct Configuration: Sendable, Equatable, Codable, ConfigurationSection {
    public var gateway = GatewaySection() {
        didSet { mqtt.gatewayID = gateway.id }
    }
    public var mqtt = MQTTSection() {
        didSet { mqtt.gatewayID = gateway.id }
    }
    public var bluez = BlueZSection()
    /// Wearables to connect to at start-up; more can be added over MQTT (`bridge/request/device/add`).
    public var devices: [DeviceEntry] = []
    public var allow = AllowSection()
    public var filter = FilterSection()
    public var dfu = DFUSection()
    public var homeassistant = HomeAssistantSection()
    public var metrics = MetricsSection()
    public var frontend = FrontendSection()
    public var hrv = HeartRateVariabilitySection()
    public var roaming = RoamingSection()
    /// ESPHome Bluetooth proxies used as radios besides the local adapter (docs/radios.md).
    public var radios: [RadioEntry] = []
    public var watchdog = WatchdogSection()

    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case gateway
        case mqtt
        case bluez
        case devices
        case allow
        case filter
        case dfu
        case homeassistant
        case metrics
        case frontend
        case hrv
        case roaming
        case radios
        case watchdog
    }

    static var nestedSchemas: [String: ConfigurationSchema] {
        [
            CodingKeys.gateway.stringValue: GatewaySection.schema,
            CodingKeys.mqtt.stringValue: MQTTSection.schema,
            CodingKeys.bluez.stringValue: BlueZSection.schema,
            CodingKeys.devices.stringValue: .list(of: DeviceEntry.schema),
            CodingKeys.allow.stringValue: AllowSection.schema,
            CodingKeys.filter.stringValue: FilterSection.schema,
            CodingKeys.dfu.stringValue: DFUSection.schema,
            CodingKeys.homeassistant.stringValue: HomeAssistantSection.schema,
            CodingKeys.metrics.stringValue: MetricsSection.schema,
            CodingKeys.frontend.stringValue: FrontendSection.schema,
            CodingKeys.hrv.stringValue: HeartRateVariabilitySection.schema,
            CodingKeys.roaming.stringValue: RoamingSection.schema,
            CodingKeys.radios.stringValue: .list(of: RadioEntry.schema),
            CodingKeys.watchdog.stringValue: WatchdogSection.schema,
        ]
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        gateway = try container.value(.gateway, default: GatewaySection())
        mqtt = try container.value(.mqtt, default: MQTTSection())
        mqtt.gatewayID = gateway.id
        bluez = try container.value(.bluez, default: BlueZSection())
        devices = try container.value(.devices, default: [])
        allow = try container.value(.allow, default: AllowSection())
        filter = try container.value(.filter, default: FilterSection())
        dfu = try container.value(.dfu, default: DFUSection())
        homeassistant = try container.value(.homeassistant, default: HomeAssistantSection())
        metrics = try container.value(.metrics, default: MetricsSection())
        frontend = try container.value(.frontend, default: FrontendSection())
        hrv = try container.value(.hrv, default: HeartRateVariabilitySection())
        roaming = try container.value(.roaming, default: RoamingSection())
        radios = try container.value(.radios, default: [])
        watchdog = try container.value(.watchdog, default: WatchdogSection())
        var seenRadios: [String: Int] = [:]
        var seenEndpoints: [String: Int] = [:]
        for (index, radio) in radios.enumerated() {
            let path = container.keyPath(.radios).appending(.index(index))
            if let first = seenRadios.updateValue(index, forKey: radio.name.lowercased()) {
                throw InvalidConfigurationValue(keyPath: path.appending(RadioEntry.CodingKeys.name.stringValue),
                                                message: "\"\(radio.name)\" is already the name of radios[\(first)] (names are compared in any case)")
            }
            if let first = seenEndpoints.updateValue(index, forKey: "\(radio.host.lowercased()):\(radio.port)") {
                throw InvalidConfigurationValue(keyPath: path.appending(RadioEntry.CodingKeys.host.stringValue),
                                                message: "\(radio.host):\(radio.port) is already radios[\(first)] (a proxy serves one client at a time)")
            }
        }

        var seenAddresses: [String: Int] = [:]
        var seenNames: [String: Int] = [:]
        for (index, device) in devices.enumerated() {
            let path = container.keyPath(.devices).appending(.index(index))
            if let first = seenAddresses.updateValue(index, forKey: device.address) {
                throw InvalidConfigurationValue(
                    keyPath: path.appending(DeviceEntry.CodingKeys.address.stringValue),
                    message: "\(device.address) is already listed as devices[\(first)]"
                )
            }
            // Device ids are compared in any case (DeviceIdentifier.same).
            if let name = device.name, let first = seenNames.updateValue(index, forKey: name.lowercased()) {
                throw InvalidConfigurationValue(
                    keyPath: path.appending(DeviceEntry.CodingKeys.name.stringValue),
                    message: "\"\(name)\" is already the name of devices[\(first)] (names are compared in any case)"
                )
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(gateway, forKey: .gateway)
        try container.encode(mqtt, forKey: .mqtt)
        try container.encode(bluez, forKey: .bluez)
        try container.encode(devices, forKey: .devices)
        try container.encode(allow, forKey: .allow)
        try container.encode(filter, forKey: .filter)
        try container.encode(dfu, forKey: .dfu)
        try container.encode(homeassistant, forKey: .homeassistant)
        try container.encode(metrics, forKey: .metrics)
        try container.encode(frontend, forKey: .frontend)
        try container.encode(hrv, forKey: .hrv)
        try container.encode(roaming, forKey: .roaming)
        try container.encode(radios, forKey: .radios)
        try container.encode(watchdog, forKey: .watchdog)
    }

    /// Set to `true` in an encoder's `userInfo` to encode the MQTT password in clear text instead of `***`.
    public static let revealSecretsKey = CodingUserInfoKey(rawValue: "wear2mqtt.revealSecrets")!
}

extension Configuration {
    /// The fully resolved configuration as YAML, for `wear2mqtt config check`: every key, defaults and
    /// derived values (such as `mqtt.client_id`) included. The password shows as `"***"` when set and `null`
    /// when not, unless `maskSecrets` is `false`.
    ///
    /// The summary is for reading; it is not meant to be loaded back (a file must not contain `password`).
    public func resolvedSummary(maskSecrets: Bool = true) -> String {
        var encoder = YAMLEncoder()
        encoder.userInfo = [Self.revealSecretsKey: !maskSecrets]
        do {
            return try encoder.encode(self)
        } catch {
            // Encoding plain strings and numbers does not fail; say so rather than crash if it ever does.
            return "# cannot render the configuration: \(error)\n"
        }
    }

    /// The non-secret settings worth showing in `<base>/bridge/info`, keyed by dotted key path. Leaves out
    /// credentials, user names and file paths.
    public var bridgeInfoSummary: [String: SummaryValue] {
        [
            "gateway.id": .text(gateway.id),
            "gateway.log_level": .text(gateway.logLevel.rawValue),
            "mqtt.base_topic": .text(mqtt.baseTopic),
            "mqtt.client_id": .text(mqtt.effectiveClientID),
            "mqtt.protocol": .text(mqtt.protocolVersion.rawValue),
            "mqtt.keepalive_s": .integer(mqtt.keepaliveSeconds),
            "mqtt.tls.enabled": .flag(mqtt.tls.enabled),
            "mqtt.spool.max_mb": .number(mqtt.spool.maxMegabytes),
            "mqtt.spool.memory_messages": .integer(mqtt.spool.memoryMessages),
            "bluez.adapter": .text(bluez.adapter ?? "auto"),
            "devices": .integer(devices.count),
            "allow.clear_data": .flag(allow.clearData),
            "allow.factory_reset": .flag(allow.factoryReset),
            "allow.dfu": .flag(allow.dfu),
            "dfu.max_mb": .number(dfu.maxMegabytes),
            "homeassistant.enabled": .flag(homeassistant.enabled),
            "homeassistant.discovery_prefix": .text(homeassistant.discoveryPrefix),
        ]
    }

    /// One value of ``bridgeInfoSummary``, typed so it becomes a JSON string, number or boolean.
    public enum SummaryValue: Sendable, Equatable, ExpressibleByStringLiteral, CustomStringConvertible {
        case text(String)
        case integer(Int)
        case number(Double)
        case flag(Bool)

        public init(stringLiteral value: String) { self = .text(value) }

        public var description: String {
            switch self {
            case .text(let value): value
            case .integer(let value): "\(value)"
            case .number(let value): "\(value)"
            case .flag(let value): "\(value)"
            }
        }
    }
}
