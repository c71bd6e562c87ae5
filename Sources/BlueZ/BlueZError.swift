import DBus

/// What a BlueZ operation can fail with, sorted by what the caller should do about it.
public enum BlueZError: Error, Sendable, Equatable, CustomStringConvertible {
    /// BlueZ is busy with this object (`org.bluez.Error.InProgress`): retry after a backoff.
    case inProgress(String)
    /// The adapter has no free connection slot (BlueZ says so in a `Failed` message): retry later, or free one.
    case connectionLimit(String)
    /// The operation needs a connection that is not there.
    case notConnected
    /// No answer, or the device did not get to ServicesResolved, in time.
    case timeout(String)
    /// No adapter matches, or it is powered off.
    case adapterUnavailable(String)
    /// No device, service or characteristic with that address or UUID.
    case notFound(String)
    /// Pairing failed: wrong passkey, rejected, canceled or timed out.
    case authenticationFailed(String)
    /// The device or characteristic does not offer this.
    case notSupported(String)
    /// BlueZ itself is not on the bus (bluetoothd stopped or restarting).
    case serviceUnavailable
    /// Any other BlueZ or D-Bus error, with its name.
    case failed(name: String, message: String)

    public var description: String {
        switch self {
        case .inProgress(let message): "operation in progress: \(message)"
        case .connectionLimit(let message): "no free connection slot on the adapter: \(message)"
        case .notConnected: "the device is not connected"
        case .timeout(let message): "timed out: \(message)"
        case .adapterUnavailable(let message): "adapter unavailable: \(message)"
        case .notFound(let message): "not found: \(message)"
        case .authenticationFailed(let message): "pairing failed: \(message)"
        case .notSupported(let message): "not supported: \(message)"
        case .serviceUnavailable: "BlueZ (org.bluez) is not on the bus"
        case .failed(let name, let message): "\(name): \(message)"
        }
    }

    /// A short name for logs: the D-Bus error name of an unclassified error, else the class.
    public var shortName: String {
        switch self {
        case .inProgress: "InProgress"
        case .connectionLimit: "ConnectionLimit"
        case .notConnected: "NotConnected"
        case .timeout: "Timeout"
        case .adapterUnavailable: "AdapterUnavailable"
        case .notFound: "NotFound"
        case .authenticationFailed: "AuthenticationFailed"
        case .notSupported: "NotSupported"
        case .serviceUnavailable: "ServiceUnavailable"
        case .failed(let name, _): name
        }
    }

    /// Whether retrying the same operation after a backoff can succeed.
    public var isRetryable: Bool {
        switch self {
        case .inProgress, .connectionLimit, .timeout, .serviceUnavailable: true
        default: false
        }
    }

    /// The peripheral's ATT error code when BlueZ passed one on (`Operation failed with ATT error: 0x80`, from
    /// `create_gatt_dbus_error` in bluez `src/gatt-client.c`): vendor services answer refusals this way.
    public var attErrorCode: UInt8? {
        guard case .failed(_, let message) = self, let range = message.firstRange(of: "ATT error: 0x") else { return nil }
        return UInt8(message[range.upperBound...].prefix(2), radix: 16)
    }

    /// Classifies a D-Bus error from org.bluez.
    public init(_ error: BusError) {
        switch error {
        case .remote(let name, let message):
            switch name {
            case BlueZErrorName.inProgress: self = .inProgress(message)
            case BlueZErrorName.notConnected: self = .notConnected
            case BlueZErrorName.doesNotExist, "org.freedesktop.DBus.Error.UnknownObject": self = .notFound(message)
            case BlueZErrorName.notSupported, "org.freedesktop.DBus.Error.UnknownMethod": self = .notSupported(message)
            case BlueZErrorName.authenticationFailed, BlueZErrorName.authenticationRejected,
                 BlueZErrorName.authenticationCanceled, BlueZErrorName.authenticationTimeout:
                self = .authenticationFailed(message.isEmpty ? name : message)
            case BlueZErrorName.notReady: self = .adapterUnavailable(message)
            case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
                self = .serviceUnavailable
            case "org.freedesktop.DBus.Error.NoReply": self = .timeout(message)
            case BlueZErrorName.failed where Self.meansNoFreeSlot(message): self = .connectionLimit(message)
            default: self = .failed(name: name, message: message)
            }
        case .timeout(let member): self = .timeout(member)
        case .disconnected: self = .serviceUnavailable
        default: self = .failed(name: "org.freedesktop.DBus.Error.Failed", message: error.description)
        }
    }

    /// BlueZ reports a full controller as a `Failed` with the kernel's words; these are the ones seen in the
    /// field (other bridges' issue trackers).
    static func meansNoFreeSlot(_ message: String) -> Bool {
        let lower = message.lowercased()
        return lower.contains("le-connection-abort-by-local") || lower.contains("connection limit")
            || lower.contains("too many") || lower.contains("command disallowed")
    }
}
