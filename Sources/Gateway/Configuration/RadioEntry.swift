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
        public var keyBytes: [UInt8]? { key.flatMap { Base64.decode($0.reveal()) } }

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
                    key = Secret(text.trimmingCharacters())
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

        /// Why `text` is not an ESPHome API key (never quoting it: it may be a real key with a typo); nil when it is.
        static func keyProblem(_ text: String) -> String? {
            guard let bytes = Base64.decode(text.trimmingCharacters()) else {
                return "is not base64 (ESPHome's api.encryption.key is 44 characters of base64)"
            }
            guard bytes.count == 32 else { return "must be 32 bytes in base64 (ESPHome's api.encryption.key), got \(bytes.count) bytes" }
            return nil
        }
    }
}

extension String {
    /// Without leading and trailing spaces and line breaks (a key pasted or read from a file).
    fileprivate func trimmingCharacters() -> String {
        let scalars = unicodeScalars.drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        let trimmed = scalars.reversed().drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        return String(String.UnicodeScalarView(trimmed.reversed()))
    }
}

/// Standard base64 (RFC 4648, with padding), decoding only: the configuration reads keys without Foundation.
enum Base64 {
    static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters.count / 4 * 3)
        var index = 0
        while index < characters.count {
            var quad: [UInt8] = []
            var padding = 0
            for character in characters[index..<index + 4] {
                if character == UInt8(ascii: "=") {
                    padding += 1
                    quad.append(0)
                    continue
                }
                guard padding == 0, let value = value(of: character) else { return nil }
                quad.append(value)
            }
            // Padding only at the very end, at most two.
            guard padding <= 2, padding == 0 || index + 4 == characters.count else { return nil }
            let group = UInt32(quad[0]) << 18 | UInt32(quad[1]) << 12 | UInt32(quad[2]) << 6 | UInt32(quad[3])
            bytes += [UInt8(group >> 16), UInt8(group >> 8 & 0xFF), UInt8(group & 0xFF)].prefix(3 - padding)
            index += 4
        }
        return bytes
    }

    private static func value(of character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
