extension Configuration {
    /// `mqtt:` — the broker connection and the topic tree the gateway owns.
    ///
    /// The password is never read from the configuration file: it comes from `WEAR2MQTT_MQTT_PASSWORD` or
    /// from the file named by `password_file`, and the loader fills in ``password``.
    public struct MQTTSection: Sendable, Equatable, Codable, ConfigurationSection {
        /// Which MQTT protocol the client speaks; MQTT 5 adds response topics, correlation data and
        /// session expiry.
        public enum ProtocolVersion: String, Sendable, CaseIterable {
            case v5 = "5"
            case v311 = "3.1.1"
        }

        public var host = "127.0.0.1"
        public var port = 1883
        /// `<base>` of every topic: one or more `/`-separated levels of `[A-Za-z0-9_-]`.
        public var baseTopic = "wear2mqtt"
        /// The configured client id; `nil` means ``effectiveClientID`` derives it from `gateway.id`.
        public var clientID: String?
        public var protocolVersion = ProtocolVersion.v5
        public var username: String?
        /// Where the password was read from, if it came from a file.
        public var passwordFile: String?
        /// The broker password from `WEAR2MQTT_MQTT_PASSWORD` or `password_file`; `nil` for none.
        public var password: Secret?
        public var keepaliveSeconds = 60
        /// MQTT 5 session expiry interval; 0 ends the session when the connection closes.
        public var sessionExpirySeconds = 0
        /// While notifications arrive closer together than this, the data path lets them gather for this long,
        /// so they are read in one wake-up and written to the broker in one go (`EventLoop.coalescingWindow`);
        /// 0 handles each one the moment it arrives. A lone notification is never held.
        public var coalesceMilliseconds = 2
        public var tls = TLSSection()
        public var reconnect = ReconnectSection()
        public var spool = SpoolSection()

        /// `gateway.id`, kept in step by ``Configuration`` so that the derived client id needs no arguments.
        var gatewayID = "wear2mqtt"

        public init() {}

        /// The client id to connect with: ``clientID`` if configured, else `wear2mqtt-<gateway.id>`.
        public var effectiveClientID: String {
            clientID ?? "wear2mqtt-\(gatewayID)"
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case host
            case port
            case baseTopic = "base_topic"
            case clientID = "client_id"
            case protocolVersion = "protocol"
            case username
            case password
            case passwordFile = "password_file"
            case keepaliveSeconds = "keepalive_s"
            case sessionExpirySeconds = "session_expiry_s"
            case coalesceMilliseconds = "coalesce_ms"
            case tls
            case reconnect
            case spool
        }

        static var nestedSchemas: [String: ConfigurationSchema] {
            [
                CodingKeys.tls.stringValue: TLSSection.schema,
                CodingKeys.reconnect.stringValue: ReconnectSection.schema,
                CodingKeys.spool.stringValue: SpoolSection.schema,
            ]
        }

        static var rejectedKeys: [String: String] {
            [
                CodingKeys.password.stringValue:
                    "the password does not belong in the configuration file; "
                    + "put it in a file named by mqtt.password_file or in the environment variable "
                    + "WEAR2MQTT_MQTT_PASSWORD"
            ]
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = Self()
            host = try container.value(.host, default: defaults.host)
            if host.isEmpty || host.contains(where: \.isWhitespace) {
                throw container.invalid(.host, "must be a host name or address without spaces, got \"\(host)\"")
            }
            port = try container.integer(.port, default: defaults.port, in: 1...65535)
            baseTopic = try container.value(.baseTopic, default: defaults.baseTopic)
            if let problem = ConfigurationRules.baseTopicProblem(baseTopic) {
                throw container.invalid(.baseTopic, problem)
            }
            clientID = try container.decodeIfPresent(String.self, forKey: .clientID)
            if let clientID, let problem = ConfigurationRules.clientIDProblem(clientID) {
                throw container.invalid(.clientID, problem)
            }
            protocolVersion = try container.choice(.protocolVersion, default: defaults.protocolVersion)
            username = try container.decodeIfPresent(String.self, forKey: .username)
            passwordFile = try container.decodeIfPresent(String.self, forKey: .passwordFile)
            if passwordFile?.isEmpty == true {
                throw container.invalid(.passwordFile, "must not be empty; leave it out for no password file")
            }
            keepaliveSeconds = try container.integer(.keepaliveSeconds, default: defaults.keepaliveSeconds, in: 5...65535)
            sessionExpirySeconds = try container.integer(
                .sessionExpirySeconds,
                default: defaults.sessionExpirySeconds,
                in: 0...Int(UInt32.max)
            )
            if sessionExpirySeconds != 0, protocolVersion != .v5 {
                throw container.invalid(
                    .sessionExpirySeconds,
                    "needs mqtt.protocol: 5 (MQTT 3.1.1 has no session expiry interval)"
                )
            }
            coalesceMilliseconds = try container.integer(.coalesceMilliseconds, default: defaults.coalesceMilliseconds, in: 0...50)
            tls = try container.value(.tls, default: defaults.tls)
            reconnect = try container.value(.reconnect, default: defaults.reconnect)
            spool = try container.value(.spool, default: defaults.spool)
        }

        /// Encodes the resolved values: the effective client id, and the password as `***` (or in clear
        /// text when the encoder's `userInfo[Configuration.revealSecretsKey]` is `true`).
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(host, forKey: .host)
            try container.encode(port, forKey: .port)
            try container.encode(baseTopic, forKey: .baseTopic)
            try container.encode(effectiveClientID, forKey: .clientID)
            try container.encode(protocolVersion.rawValue, forKey: .protocolVersion)
            try container.encode(username, forKey: .username)
            let reveal = encoder.userInfo[Configuration.revealSecretsKey] as? Bool == true
            try container.encode(password.map { reveal ? $0.reveal() : Secret.mask }, forKey: .password)
            try container.encode(passwordFile, forKey: .passwordFile)
            try container.encode(keepaliveSeconds, forKey: .keepaliveSeconds)
            try container.encode(sessionExpirySeconds, forKey: .sessionExpirySeconds)
            try container.encode(coalesceMilliseconds, forKey: .coalesceMilliseconds)
            try container.encode(tls, forKey: .tls)
            try container.encode(reconnect, forKey: .reconnect)
            try container.encode(spool, forKey: .spool)
        }
    }
}
