import DBus

/// An `org.bluez.Error.*` answer with the text bluetoothd 5.66 sends with it (`src/error.c` and the call sites
/// in `src/device.c`, `src/adapter.c`, `src/gatt-client.c`, `src/agent.c`), so a client that matches on the
/// message as well as the name sees what it would see from BlueZ.
public struct BlueZErrorReply: Error, Equatable, Sendable, CustomStringConvertible {
    public let name: String
    public let message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// An error named by a scenario or the control interface: a short name (`InProgress`) or a full one; the
    /// message is BlueZ's usual text for that name unless given.
    public init?(named text: String, message: String? = nil) {
        let name = text.contains(".") ? text : Self.prefix + text
        guard Self.isValidErrorName(name) else { return nil }
        self.name = name
        self.message = message ?? Self.usualMessages[name] ?? ""
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    package var busError: BusError { .remote(name: name, message: message) }

    static let prefix = "org.bluez.Error."

    public static func failed(_ message: String) -> BlueZErrorReply { .init(name: prefix + "Failed", message: message) }
    /// `btd_error_in_progress`.
    public static let inProgress = BlueZErrorReply(name: prefix + "InProgress", message: "In Progress")
    /// `btd_error_busy`: the same name with the text StartDiscovery answers.
    public static let busy = BlueZErrorReply(name: prefix + "InProgress", message: "Operation already in progress")
    public static func notPermitted(_ message: String) -> BlueZErrorReply { .init(name: prefix + "NotPermitted", message: message) }
    public static let notAuthorized = BlueZErrorReply(name: prefix + "NotAuthorized", message: "Operation Not Authorized")
    public static let invalidArguments = BlueZErrorReply(name: prefix + "InvalidArguments",
                                                         message: "Invalid arguments in method call")
    public static func invalidArguments(_ message: String) -> BlueZErrorReply {
        .init(name: prefix + "InvalidArguments", message: message)
    }
    public static let notSupported = BlueZErrorReply(name: prefix + "NotSupported", message: "Operation is not supported")
    public static let notConnected = BlueZErrorReply(name: prefix + "NotConnected", message: "Not Connected")
    public static let alreadyConnected = BlueZErrorReply(name: prefix + "AlreadyConnected", message: "Already Connected")
    public static let doesNotExist = BlueZErrorReply(name: prefix + "DoesNotExist", message: "Does Not Exist")
    public static let alreadyExists = BlueZErrorReply(name: prefix + "AlreadyExists", message: "Already Exists")
    public static let notReady = BlueZErrorReply(name: prefix + "NotReady", message: "Resource Not Ready")
    public static let authenticationFailed = BlueZErrorReply(name: prefix + "AuthenticationFailed", message: "Authentication Failed")
    public static let authenticationCanceled = BlueZErrorReply(name: prefix + "AuthenticationCanceled",
                                                               message: "Authentication Canceled")
    public static let authenticationRejected = BlueZErrorReply(name: prefix + "AuthenticationRejected",
                                                               message: "Authentication Rejected")
    public static let authenticationTimeout = BlueZErrorReply(name: prefix + "AuthenticationTimeout",
                                                              message: "Authentication Timeout")
    public static let connectionAttemptFailed = BlueZErrorReply(name: prefix + "ConnectionAttemptFailed", message: "Page Timeout")
    /// What an LE connection that could not be established answers (`btd_error_le_errno(ECONNABORTED)`).
    public static let leConnectionAbortByLocal = failed("le-connection-abort-by-local")

    static let usualMessages: [String: String] = {
        // InProgress: the text field reports show (`btd_error_busy`), not `btd_error_in_progress`'s.
        let all: [BlueZErrorReply] = [
            .busy, .notAuthorized, .invalidArguments, .notSupported, .notConnected, .alreadyConnected,
            .doesNotExist, .alreadyExists, .notReady, .authenticationFailed, .authenticationCanceled,
            .authenticationRejected, .authenticationTimeout, .connectionAttemptFailed,
            .init(name: prefix + "NotAvailable", message: "Operation currently not available"),
            .init(name: prefix + "InvalidValueLength", message: "Invalid value length"),
            .init(name: prefix + "InvalidOffset", message: "Invalid offset"),
            .failed("Operation failed"), .notPermitted("Operation not permitted"),
        ]
        return Dictionary(all.map { ($0.name, $0.message) }, uniquingKeysWith: { first, _ in first })
    }()

    /// D-Bus error-name syntax: at least two dot-separated elements of `[A-Za-z0-9_]`, not starting with a digit.
    static func isValidErrorName(_ name: String) -> Bool {
        let elements = name.split(separator: ".", omittingEmptySubsequences: false)
        guard elements.count >= 2, name.utf8.count <= 255 else { return false }
        return elements.allSatisfy { element in
            guard let first = element.utf8.first, !(0x30...0x39).contains(first) else { return false }
            return element.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F
            }
        }
    }

    /// How BlueZ reports an ATT error response from the peripheral (`create_gatt_dbus_error` in
    /// `src/gatt-client.c`). Code 0 is a procedure that failed without an ATT error (cancelled by a disconnect).
    package static func fromATT(_ code: UInt8) -> BlueZErrorReply {
        switch code {
        case 0x02: return .notPermitted("Read not permitted")
        case 0x03: return .notPermitted("Write not permitted")
        case 0x05, 0x0F, 0x0C: return .notPermitted("Not paired")
        case 0x07: return .invalidArguments("Invalid offset")
        case 0x0D: return .invalidArguments("Invalid Length")
        case 0x08: return .notAuthorized
        case 0x06: return .notSupported
        case 0: return .failed("Operation failed")
        default:
            let hex = String(code, radix: 16)
            return .failed("Operation failed with ATT error: 0x" + (hex.count == 1 ? "0" + hex : hex))
        }
    }
}
