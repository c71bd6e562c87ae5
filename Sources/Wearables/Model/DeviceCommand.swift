/// A request to one device, already parsed from JSON by the gateway; drivers validate what only they can
/// (ranges that depend on the device, unknown setting names) and answer with `CommandError.invalidValue`.
public enum DeviceCommand: Sendable, Equatable {
    /// Re-read battery and device information and republish the state.
    case refresh
    /// Make the device noticeable: a number of vibrations, or an alert level (read from its contract name once, by
    /// the gateway's parser).
    case find(vibrations: Int?, level: AlertLevel?)
    /// Set the device clock from the gateway's.
    case timeSync
    /// Sensors, gestures and vendor stream switches: `{"sensors":{"accelerometer":{"period_ms":20}},…}`.
    case configure([String: DeviceValue])
    /// Any subset of the device's settings.
    case settings([String: DeviceValue])
    /// Download history: fitness records or epochs.
    case sync(since: Int64?, until: Int64?)
    /// A command the contract names but only some drivers know (`clear_data`, `factory_reset`, `dfu`, …).
    case named(String, [String: DeviceValue])

    /// The fields the request carried (those of `configure`, `settings` and the named commands), as a
    /// description's `Duration` reads them.
    public var arguments: [String: DeviceValue] {
        switch self {
        case .configure(let request), .settings(let request), .named(_, let request): request
        default: [:]
        }
    }

    /// The contract's command name, for errors and logs.
    public var name: String {
        switch self {
        case .refresh: "refresh"
        case .find: "find"
        case .timeSync: "time_sync"
        case .configure: "configure"
        case .settings: "settings"
        case .sync: "sync"
        case .named(let name, _): name
        }
    }
}

/// Why a command failed, with the MQTT contract's error code. The message is a sentence for a person.
public struct CommandError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case invalidPayload = "INVALID_PAYLOAD"
        case invalidValue = "INVALID_VALUE"
        case unknownCommand = "UNKNOWN_COMMAND"
        case deviceNotFound = "DEVICE_NOT_FOUND"
        case deviceDisconnected = "DEVICE_DISCONNECTED"
        case notSupported = "NOT_SUPPORTED"
        case forbidden = "FORBIDDEN"
        case busy = "BUSY"
        case timeout = "TIMEOUT"
        case pairingRequired = "PAIRING_REQUIRED"
        case pairingFailed = "PAIRING_FAILED"
        case adapterUnavailable = "ADAPTER_UNAVAILABLE"
        case dfuFailed = "DFU_FAILED"
        case internalError = "INTERNAL"
    }

    public var code: Code
    public var message: String
    /// The vendor's own result code, when the device gave one.
    public var vendorCode: Int?

    public init(_ code: Code, _ message: String, vendorCode: Int? = nil) {
        self.code = code
        self.message = message
        self.vendorCode = vendorCode
    }

    public static func invalidValue(field: String, _ message: String) -> CommandError {
        CommandError(.invalidValue, "\(field): \(message)")
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
