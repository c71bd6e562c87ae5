/// The request opcodes of the GoFIT vendor service (docs/protocols/gofit.md, "Opcodes").
public enum GoFITOpcode: UInt8, Sendable, CaseIterable {
    case pairStart = 0x01
    case pairConfirm = 0x02
    case authChallenge = 0x03
    case authProof = 0x04
    case identity = 0x06
    case settingsRead = 0x10
    case settingsWrite = 0x11
    case historyOpen = 0x20
    case historyPage = 0x21
    case historyAck = 0x22
    case historyStatus = 0x23
    case findBand = 0x30
    case clearData = 0x40
    case initialise = 0x41

    /// A response carries its request's opcode with bit 7 set.
    public var responseOpcode: UInt8 { rawValue | 0x80 }

    /// The request's opcode from a response's, nil when `responseOpcode` names no request (an event's 0xE0…0xEF
    /// included).
    public init?(responseOpcode: UInt8) {
        guard responseOpcode & 0x80 != 0 else { return nil }
        self.init(rawValue: responseOpcode & 0x7F)
    }

    /// The opcodes a band answers before the connection is authenticated; everything else gets status 23 (or 22).
    public var isAllowedBeforeAuthentication: Bool {
        switch self {
        case .pairStart, .pairConfirm, .authChallenge, .authProof, .identity: true
        default: false
        }
    }
}

/// Frames the band sends unasked, in 0xE0…0xEF; they are not answered.
public enum GoFITEventOpcode: UInt8, Sendable {
    case findPhone = 0xE0
}

/// The first payload byte of every response: the SDK's `E_RESPONSE_CODE`, passed on to MQTT as `vendor_code`.
///
/// A struct rather than an enum so that a status this code does not know still decodes, and still reaches the
/// user with its number.
public struct GoFITStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let ok = GoFITStatus(rawValue: 10)
    public static let pairingFailed = GoFITStatus(rawValue: 14)
    public static let pairingCodeNotFound = GoFITStatus(rawValue: 15)
    public static let settingFormatError = GoFITStatus(rawValue: 18)
    public static let notImplemented = GoFITStatus(rawValue: 21)
    public static let pairingNeeded = GoFITStatus(rawValue: 22)
    public static let authorizationNeeded = GoFITStatus(rawValue: 23)
    public static let otherDeviceSyncing = GoFITStatus(rawValue: 33)

    /// The SDK's name of the status, `status N` for one it does not list.
    public var sdkName: String {
        switch self {
        case .ok: "BLE_CMD_OK"
        case .pairingFailed: "DEVICE_PAIRING_FAIL"
        case .pairingCodeNotFound: "DEVICE_PAIRING_CODE_NOT_FOUND"
        case .settingFormatError: "BLE_SETTING_FORMAT_ERROR"
        case .notImplemented: "MESSAGE_TYPE_NON_EXISTENT_OR_NOT_IMPLEMENTED"
        case .pairingNeeded: "PAIRING_NEEDED"
        case .authorizationNeeded: "AUTHORIZATION_NEEDED"
        case .otherDeviceSyncing: "OTHER_DEVICE_SYNCING"
        default: "status \(rawValue)"
        }
    }

    public var description: String { sdkName }

    /// The MQTT error of the status table, with the status as `vendorCode`; nil for `ok`. A status the table
    /// does not list is `INTERNAL`: the band answered something neither side of the contract defines.
    public var commandError: CommandError? {
        let code: CommandError.Code
        let message: String
        switch self {
        case .ok:
            return nil
        case .pairingFailed:
            code = .pairingFailed
            message = "the band rejected the pairing code"
        case .pairingCodeNotFound:
            code = .pairingFailed
            message = "the band shows no pairing code for this pairing, or the code expired; start pairing again"
        case .settingFormatError:
            code = .invalidValue
            message = "the band rejected a setting or parameter as malformed or out of range"
        case .notImplemented:
            code = .notSupported
            message = "the band does not implement this request"
        case .pairingNeeded:
            code = .pairingRequired
            message = "the band holds no pairing; pair it first"
        case .authorizationNeeded:
            code = .pairingRequired
            message = "the band did not authenticate this gateway; it may be paired with another host, so pair it again"
        case .otherDeviceSyncing:
            code = .busy
            message = "another history transfer is open on the band"
        default:
            code = .internalError
            message = "the band answered with unknown status \(rawValue)"
        }
        return CommandError(code, message, vendorCode: Int(rawValue))
    }
}
