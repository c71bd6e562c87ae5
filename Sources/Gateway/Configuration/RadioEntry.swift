import FoundationEssentials

extension Configuration {
    /// One entry of `radios:` — an ESPHome Bluetooth proxy the gateway uses as a radio beside its local adapter
    /// (docs/radios.md; `GatewayService` connects to each through an `ESPHomeCentral`).
    ///
    /// The key is the proxy's `api.encryption.key` (base64 of 32 bytes). It may stand here (`key`) — ESPHome users keep
    /// it in their YAML anyway — or, kept out of config.yaml, in a file (`key_file`); never both. `config check` and
    /// every log show it as `***`.
    public struct RadioEntry: Sendable, Equatable, Codable, ConfigurationSection {
        /// How `bridge/info`, the device state and Home Assistant name the radio; one topic level.
        public var name: String
        public var host: String
        /// ESPHome's native API port.
        public var port = 6053
        public var key: Secret?
        public var keyFile: String?

        public init(name: String, host: String, port: Int = 6053, key: Secret? = nil, keyFile: String? = nil) {
            self.name = name
            self.host = host
            self.port = port
            self.key = key
            self.keyFile = keyFile
        }

        /// The key's 32 bytes, once loaded (nil: the proxy speaks plaintext).
        public var keyBytes: [UInt8]? { key.flatMap { Self.base64Decoded($0.reveal()) } }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case name
            case host
            case port
            case key
            case keyFile = "key_file"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard let name = try container.decodeIfPresent(String.self, forKey: .name) else {
                throw InvalidConfigurationValue(keyPath: ConfigurationKeyPath(codingPath: container.codingPath),
                                                message: "needs a name (how bridge/info and Home Assistant call the radio)")
            }
            if let problem = ConfigurationRules.segmentProblem(name, maxLength: 32) { throw container.invalid(.name, problem) }
            self.name = name
            guard let host = try container.decodeIfPresent(String.self, forKey: .host), !host.isEmpty else {
                throw container.invalid(.host, "needs the proxy's host name or IP address (proxy-kitchen.local, 192.168.1.40)")
            }
            if host.contains(where: { $0 == " " || $0 == "/" }) {
                throw container.invalid(.host, "must be a host name or an IP address, got \"\(host)\"")
            }
            self.host = host
            port = try container.value(.port, default: 6053)
            guard (1...65_535).contains(port) else { throw container.invalid(.port, "must be 1-65535, got \(port)") }
            keyFile = try container.decodeIfPresent(String.self, forKey: .keyFile)
            if keyFile?.isEmpty == true { throw container.invalid(.keyFile, "must not be empty; leave it out for a plaintext proxy") }
            if let text = try container.decodeIfPresent(String.self, forKey: .key) {
                guard keyFile == nil else {
                    throw container.invalid(.key, "set key or key_file, not both")
                }
                guard let problem = Self.keyProblem(text) else {
                    key = Secret(text.trimmingWhitespace())
                    return
                }
                throw container.invalid(.key, problem)
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            let reveal = encoder.userInfo[Configuration.revealSecretsKey] as? Bool == true
            try container.encode(name, forKey: .name)
            try container.encode(host, forKey: .host)
            try container.encode(port, forKey: .port)
            try container.encode(key.map { reveal ? $0.reveal() : Secret.mask }, forKey: .key)
            try container.encode(keyFile, forKey: .keyFile)
        }

        /// Standard base64 (RFC 4648, padded), as ESPHome writes its keys.
        static func base64Decoded(_ text: String) -> [UInt8]? { Data(base64Encoded: text).map { Array($0) } }

        /// Why `text` is not an ESPHome API key (never quoting it: it may be a real key with a typo); nil when it is.
        static func keyProblem(_ text: String) -> String? {
            guard let bytes = Self.base64Decoded(text.trimmingWhitespace()) else {
                return "is not base64 (ESPHome's api.encryption.key is 44 characters of base64)"
            }
            guard bytes.count == 32 else { return "must be 32 bytes in base64 (ESPHome's api.encryption.key), got \(bytes.count) bytes" }
            return nil
        }
    }
}
