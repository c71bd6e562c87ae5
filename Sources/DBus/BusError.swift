/// What can go wrong talking over D-Bus. A remote error keeps its D-Bus name (for example
/// `org.bluez.Error.InProgress`) so callers can tell a retryable answer from a final one.
public enum BusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The peer answered with a D-Bus error.
    case remote(name: String, message: String)
    /// No reply within the call's timeout.
    case timeout(member: String)
    /// The connection to the bus is gone.
    case disconnected
    /// Connecting to the bus failed.
    case connectionFailed(String)
    /// The call's arguments cannot be sent (bad object path, string with NUL, mismatched signature).
    case invalidArguments(String)
    /// A reply did not have the expected shape.
    case unexpectedReply(String)

    public var description: String {
        switch self {
        case .remote(let name, let message): message.isEmpty ? name : "\(name): \(message)"
        case .timeout(let member): "no reply to \(member) in time"
        case .disconnected: "the D-Bus connection is closed"
        case .connectionFailed(let reason): "cannot connect to D-Bus: \(reason)"
        case .invalidArguments(let reason): "invalid D-Bus arguments: \(reason)"
        case .unexpectedReply(let reason): "unexpected D-Bus reply: \(reason)"
        }
    }

    /// The D-Bus error name, for remote errors.
    public var remoteName: String? {
        if case .remote(let name, _) = self { return name }
        return nil
    }

    // Standard error names, for exported objects' answers.
    public static func unknownMethod(_ message: String) -> BusError {
        .remote(name: "org.freedesktop.DBus.Error.UnknownMethod", message: message)
    }
    public static func unknownObject(_ message: String) -> BusError {
        .remote(name: "org.freedesktop.DBus.Error.UnknownObject", message: message)
    }
    public static func unknownInterface(_ message: String) -> BusError {
        .remote(name: "org.freedesktop.DBus.Error.UnknownInterface", message: message)
    }
    public static func unknownProperty(_ message: String) -> BusError {
        .remote(name: "org.freedesktop.DBus.Error.UnknownProperty", message: message)
    }
    public static func invalidArgs(_ message: String) -> BusError {
        .remote(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }
    public static func propertyReadOnly(_ message: String) -> BusError {
        .remote(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: message)
    }
    public static func failed(_ message: String) -> BusError {
        .remote(name: "org.freedesktop.DBus.Error.Failed", message: message)
    }
}
