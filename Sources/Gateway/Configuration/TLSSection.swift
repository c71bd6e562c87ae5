extension Configuration {
    /// `mqtt.tls:` — TLS to the broker.
    ///
    /// TLS is on only when `enabled: true`. Any other TLS key set while `enabled` is false is an error
    /// rather than silently ignored, so a certificate path in the file always means the certificate is used.
    /// The files are checked when connecting, not when loading.
    public struct TLSSection: Sendable, Equatable, Codable, ConfigurationSection {
        public enum MinimumVersion: String, Sendable, CaseIterable {
            case tls12 = "1.2"
            case tls13 = "1.3"
        }

        public var enabled = false
        /// PEM file of the CA certificates that sign the broker's certificate.
        public var caFile: String?
        /// Directory of hashed CA certificates (`openssl rehash`).
        public var caDirectory: String?
        /// Client certificate for mutual TLS; requires ``keyFile``.
        public var certificateFile: String?
        /// Private key of ``certificateFile``.
        public var keyFile: String?
        public var minimumVersion = MinimumVersion.tls12
        /// `true` skips verifying the broker's host name against its certificate. For testing only.
        public var insecure = false

        public init() {}

        enum CodingKeys: String, CodingKey, CaseIterable {
            case enabled
            case caFile = "ca_file"
            case caDirectory = "ca_dir"
            case certificateFile = "cert_file"
            case keyFile = "key_file"
            case minimumVersion = "min_version"
            case insecure
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = Self()
            enabled = try container.value(.enabled, default: defaults.enabled)
            caFile = try container.decodeIfPresent(String.self, forKey: .caFile)
            caDirectory = try container.decodeIfPresent(String.self, forKey: .caDirectory)
            certificateFile = try container.decodeIfPresent(String.self, forKey: .certificateFile)
            keyFile = try container.decodeIfPresent(String.self, forKey: .keyFile)
            minimumVersion = try container.choice(.minimumVersion, default: defaults.minimumVersion)
            insecure = try container.value(.insecure, default: defaults.insecure)

            for (key, path) in [(CodingKeys.caFile, caFile), (.caDirectory, caDirectory),
                (.certificateFile, certificateFile), (.keyFile, keyFile)]
            where path?.isEmpty == true {
                throw container.invalid(key, "must not be empty; leave it out instead")
            }
            if !enabled {
                let set: [(CodingKeys, Bool)] = [
                    (.caFile, caFile != nil), (.caDirectory, caDirectory != nil),
                    (.certificateFile, certificateFile != nil), (.keyFile, keyFile != nil),
                    (.minimumVersion, minimumVersion != defaults.minimumVersion), (.insecure, insecure),
                ]
                if let (key, _) = set.first(where: \.1) {
                    throw container.invalid(key, "is set but TLS is off; add mqtt.tls.enabled: true to use TLS")
                }
            }
            if certificateFile != nil, keyFile == nil {
                throw container.invalid(.certificateFile, "needs mqtt.tls.key_file, the client certificate's private key")
            }
            if keyFile != nil, certificateFile == nil {
                throw container.invalid(.keyFile, "needs mqtt.tls.cert_file, the client certificate for this key")
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(enabled, forKey: .enabled)
            try container.encode(caFile, forKey: .caFile)
            try container.encode(caDirectory, forKey: .caDirectory)
            try container.encode(certificateFile, forKey: .certificateFile)
            try container.encode(keyFile, forKey: .keyFile)
            try container.encode(minimumVersion.rawValue, forKey: .minimumVersion)
            try container.encode(insecure, forKey: .insecure)
        }
    }
}
