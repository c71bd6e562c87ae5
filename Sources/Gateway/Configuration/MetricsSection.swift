extension Configuration {
    /// `metrics:` — Prometheus metrics on `GET /metrics` (docs/metrics.md). Off by default: the HTTP server's
    /// threads and socket cost a Raspberry Pi nothing unless someone scrapes them; loopback by default, because the
    /// page shows device ids and has no authentication.
    public struct MetricsSection: Sendable, Equatable, Codable, ConfigurationSection {
        public var enabled = false
        /// `host:port`; an IPv6 host in brackets (`[::1]:9464`). 9464 is the port Prometheus's list gives exporters
        /// of OpenTelemetry-style metrics, free on a gateway.
        public var listen = "127.0.0.1:9464" {
            didSet { endpoint = ListenAddress(listen) ?? endpoint }
        }
        /// `listen`, split; valid whenever `listen` came through the decoder.
        public private(set) var endpoint = ListenAddress(host: "127.0.0.1", port: 9464)

        public init() {}

        enum CodingKeys: String, CodingKey, CaseIterable {
            case enabled
            case listen
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = Self()
            enabled = try container.value(.enabled, default: defaults.enabled)
            (listen, endpoint) = try container.listenAddress(.listen, default: defaults.listen)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(enabled, forKey: .enabled)
            try container.encode(listen, forKey: .listen)
        }
    }

    /// A listening address as `metrics.listen` writes it: `host:port`, `[v6-host]:port`.
    public struct ListenAddress: Sendable, Equatable {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// Nil unless `text` is a non-empty host (bracketed if it has colons) and a port in 1...65535.
        public init?(_ text: String) {
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
                  (1...65535).contains(port) else { return nil }
            var host = text[..<colon]
            if host.hasPrefix("[") {
                guard host.hasSuffix("]"), host.count > 2 else { return nil }
                host = host.dropFirst().dropLast()
            } else if host.contains(":") || host.contains("]") {
                return nil
            }
            guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" || $0 == "[" || $0 == "]" }) else { return nil }
            self.init(host: String(host), port: port)
        }
    }
}
