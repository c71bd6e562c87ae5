/// How a log record becomes a line on stderr; chosen with `gateway.log_format`.
public enum LogFormat: String, Sendable, CaseIterable {
    /// `key=value` pairs, readable by people and by logfmt parsers (Loki, Vector, `hl`).
    case logfmt
    /// One JSON object per line, for log shippers that want structure.
    case json
}
