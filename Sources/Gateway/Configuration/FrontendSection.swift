#if canImport(Glibc)
import Glibc
#endif

extension Configuration {
    /// `frontend:` — the web interface (docs/frontend.md): pages and one WebSocket speaking the MQTT contract, served
    /// by the gateway. Off unless enabled; loopback by default. Listening beyond loopback needs a token: the page
    /// controls every wearable (`allow` still guards what it may do, exactly as on MQTT).
    ///
    /// The token follows the broker password's rule: never in the file (config.yaml is often readable by all), but in
    /// a file named by `auth_token_file` or in `WEAR2MQTT_FRONTEND_AUTH_TOKEN`; the loader fills in ``authToken``.
    public struct FrontendSection: Sendable, Equatable, Codable, ConfigurationSection {
        public var enabled = false
        /// `host:port` as `metrics.listen` writes it. 8780: free on a gateway, beside Home Assistant's 8123.
        public var listen = "127.0.0.1:8780" {
            didSet { endpoint = ListenAddress(listen) ?? endpoint }
        }
        public private(set) var endpoint = ListenAddress(host: "127.0.0.1", port: 8780)
        public var authTokenFile: String?
        /// The token the page asks for (from `auth_token_file` or the environment); nil for none.
        public var authToken: Secret?
        /// The prefix a reverse proxy forwards without stripping (`/wear2mqtt`); `/` for none. Home Assistant's
        /// ingress strips its own and says it in `X-Ingress-Path`, which needs nothing here.
        public var basePath = "/"
        /// Origins besides the page's own that may open the WebSocket (a dashboard embedding it).
        public var allowedOrigins: [String] = []
        /// Addresses of reverse proxies that sign people in themselves (Home Assistant's ingress, 172.30.32.2): their
        /// connections skip the token, and listening beyond loopback needs no token when only they should get in.
        public var trustedProxies: [String] = []
        public var tls = FrontendTLS()

        public init() {}

        /// `frontend.tls:` — HTTPS with this certificate and key (PEM); both or neither.
        public struct FrontendTLS: Sendable, Equatable, Codable, ConfigurationSection {
            public var certificateFile: String?
            public var keyFile: String?
            public var enabled: Bool { certificateFile != nil }

            public init() {}

            enum CodingKeys: String, CodingKey, CaseIterable {
                case certificateFile = "cert_file"
                case keyFile = "key_file"
            }

            public init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                certificateFile = try container.decodeIfPresent(String.self, forKey: .certificateFile)
                keyFile = try container.decodeIfPresent(String.self, forKey: .keyFile)
                for (key, path) in [(CodingKeys.certificateFile, certificateFile), (.keyFile, keyFile)] where path?.isEmpty == true {
                    throw container.invalid(key, "must not be empty; leave it out instead")
                }
                if certificateFile != nil, keyFile == nil {
                    throw container.invalid(.certificateFile, "needs frontend.tls.key_file, the certificate's private key")
                }
                if keyFile != nil, certificateFile == nil {
                    throw container.invalid(.keyFile, "needs frontend.tls.cert_file, the certificate for this key")
                }
            }

            public func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(certificateFile, forKey: .certificateFile)
                try container.encode(keyFile, forKey: .keyFile)
            }
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case enabled
            case listen
            case authToken = "auth_token"
            case authTokenFile = "auth_token_file"
            case basePath = "base_path"
            case allowedOrigins = "allowed_origins"
            case trustedProxies = "trusted_proxies"
            case tls
        }

        static var nestedSchemas: [String: ConfigurationSchema] {
            [CodingKeys.allowedOrigins.stringValue: .list(of: .value), CodingKeys.trustedProxies.stringValue: .list(of: .value),
             CodingKeys.tls.stringValue: FrontendTLS.schema]
        }

        static var rejectedKeys: [String: String] {
            [
                CodingKeys.authToken.stringValue:
                    "the token does not belong in the configuration file; put it in a file named by "
                    + "frontend.auth_token_file or in the environment variable \(EnvironmentOverrides.frontendTokenVariable)"
            ]
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = Self()
            enabled = try container.value(.enabled, default: defaults.enabled)
            (listen, endpoint) = try container.listenAddress(.listen, default: defaults.listen)
            authTokenFile = try container.decodeIfPresent(String.self, forKey: .authTokenFile)
            if authTokenFile?.isEmpty == true {
                throw container.invalid(.authTokenFile, "must not be empty; leave it out for no token")
            }
            let basePath = try container.value(.basePath, default: defaults.basePath)
            if let problem = Self.basePathProblem(basePath) { throw container.invalid(.basePath, problem) }
            self.basePath = basePath.count > 1 && basePath.hasSuffix("/") ? String(basePath.dropLast()) : basePath
            allowedOrigins = try container.value(.allowedOrigins, default: [])
            if let bad = allowedOrigins.first(where: { !Self.isOrigin($0) }) {
                throw container.invalid(.allowedOrigins, "\"\(bad)\" is not an origin like https://example.org or http://192.168.1.5:8123")
            }
            trustedProxies = try container.value(.trustedProxies, default: [])
            if let bad = trustedProxies.first(where: { !Self.isIPAddress($0) }) {
                throw container.invalid(.trustedProxies, "\"\(bad)\" is not an IP address like 172.30.32.2 or fd00::2 (a proxy is named by the address it connects from)")
            }
            tls = try container.value(.tls, default: FrontendTLS())
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            let reveal = encoder.userInfo[Configuration.revealSecretsKey] as? Bool == true
            try container.encode(enabled, forKey: .enabled)
            try container.encode(listen, forKey: .listen)
            try container.encode(authToken.map { reveal ? $0.reveal() : Secret.mask }, forKey: .authToken)
            try container.encode(authTokenFile, forKey: .authTokenFile)
            try container.encode(basePath, forKey: .basePath)
            try container.encode(allowedOrigins, forKey: .allowedOrigins)
            try container.encode(trustedProxies, forKey: .trustedProxies)
            try container.encode(tls, forKey: .tls)
        }

        /// Whether the listen address reaches this machine only (`127.0.0.0/8`, `::1`, `localhost`).
        public var listensOnLoopback: Bool {
            let host = endpoint.host.lowercased()
            return host == "localhost" || host == "::1" || host.hasPrefix("127.")
        }

        /// The problem of a listen address beyond loopback without a token, naming the key to set; nil when fine.
        var exposureProblem: String? {
            guard enabled, !listensOnLoopback, authToken == nil, trustedProxies.isEmpty else { return nil }
            return "\(listen) is reachable from other machines, so the web interface needs a token: set frontend.auth_token_file "
                + "(or \(EnvironmentOverrides.frontendTokenVariable)), or frontend.trusted_proxies to the proxy that signs people in, "
                + "or listen on 127.0.0.1"
        }

        /// An IPv4 or IPv6 address as `inet_pton` reads it (no host names: a proxy is known by where it connects from).
        static func isIPAddress(_ text: String) -> Bool {
            var buffer = in6_addr()
            return text.withCString { inet_pton(AF_INET, $0, &buffer) == 1 || inet_pton(AF_INET6, $0, &buffer) == 1 }
        }

        static func basePathProblem(_ path: String) -> String? {
            guard path.hasPrefix("/") else { return "must start with /, got \"\(path)\"" }
            if path.contains("//") { return "must not contain an empty level (//), got \"\(path)\"" }
            let allowed = path.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "/-_.~".unicodeScalars.contains(scalar))
            }
            if !allowed { return "may only contain letters, digits and / - _ . ~, got \"\(path)\"" }
            if path.split(separator: "/").contains(where: { $0 == "." || $0 == ".." }) {
                return "must not contain . or .. levels, got \"\(path)\""
            }
            return nil
        }

        /// `scheme://host[:port]`, lower case, no path: what a browser sends as `Origin`.
        static func isOrigin(_ text: String) -> Bool {
            for scheme in ["http://", "https://"] where text.hasPrefix(scheme) {
                let rest = text.dropFirst(scheme.count)
                return !rest.isEmpty && !rest.contains("/") && !rest.contains(" ") && rest == rest.lowercased()
            }
            return false
        }
    }
}
