import CMosquitto

/// Why the MQTT client could not do what was asked. Each case says what a user can do about it.
public enum MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The broker refused our credentials (CONNACK reason). Retrying cannot help; the config must change.
    case authenticationRefused(reason: String)
    /// The TLS handshake failed: wrong CA, expired or mismatched certificate, unsupported version.
    case tlsFailure(String)
    /// A setting libmosquitto rejected before any connection attempt.
    case invalidSetting(String)
    /// A topic or filter the MQTT specification forbids.
    case invalidTopic(String)
    /// The on-disk spool for durable messages is full; nothing was written.
    case spoolFull(limitBytes: Int)
    /// The spool directory or a spool file could not be used.
    case spoolIO(String)
    /// The client was closed; nothing more is accepted.
    case closed

    public var description: String {
        switch self {
        case .authenticationRefused(let reason): "the MQTT broker refused the credentials: \(reason)"
        case .tlsFailure(let message): "TLS connection to the MQTT broker failed: \(message)"
        case .invalidSetting(let message): "invalid MQTT setting: \(message)"
        case .invalidTopic(let topic): "invalid MQTT topic \"\(topic)\""
        case .spoolFull(let limit): "the durable message spool is full (\(limit) bytes); message not stored"
        case .spoolIO(let message): "durable message spool: \(message)"
        case .closed: "the MQTT client is closed"
        }
    }
}

/// Human text for libmosquitto result and reason codes.
enum MosquittoText {
    static func error(_ code: Int32) -> String { String(cString: mosquitto_strerror(code)) }
    static func reason(_ code: Int32) -> String { String(cString: mosquitto_reason_string(code)) }
    static func connack(_ code: Int32) -> String { String(cString: mosquitto_connack_string(code)) }
}
