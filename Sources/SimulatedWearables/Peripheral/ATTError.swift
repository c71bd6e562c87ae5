import Wearables

/// An ATT error response (Core Specification Vol 3, Part F, 3.4.1.1), what a peripheral answers instead of a
/// value. Behaviours throw these from reads and writes; the host turns them into whatever its central-side API
/// reports (BlueZ maps them onto `org.bluez.Error.*` names).
public struct ATTError: Error, Hashable, Sendable, CustomStringConvertible {
    public let code: UInt8

    public init(code: UInt8) { self.code = code }

    public static let invalidHandle = ATTError(code: 0x01)
    public static let readNotPermitted = ATTError(code: 0x02)
    public static let writeNotPermitted = ATTError(code: 0x03)
    public static let invalidPDU = ATTError(code: 0x04)
    public static let insufficientAuthentication = ATTError(code: 0x05)
    public static let requestNotSupported = ATTError(code: 0x06)
    public static let invalidOffset = ATTError(code: 0x07)
    public static let insufficientAuthorization = ATTError(code: 0x08)
    public static let attributeNotLong = ATTError(code: 0x0B)
    public static let insufficientEncryptionKeySize = ATTError(code: 0x0C)
    public static let invalidAttributeValueLength = ATTError(code: 0x0D)
    public static let unlikelyError = ATTError(code: 0x0E)
    public static let insufficientEncryption = ATTError(code: 0x0F)
    /// Application errors are 0x80–0x9F; each service defines its own (Heart Rate's 0x80 is "Control Point
    /// value not supported").
    public static func application(_ code: UInt8) -> ATTError { ATTError(code: code) }
    /// Common Profile and Service Error Codes (Core Specification Supplement, Part B, 1.2).
    public static let cccdImproperlyConfigured = ATTError(code: 0xFD)
    public static let procedureAlreadyInProgress = ATTError(code: 0xFE)
    public static let outOfRange = ATTError(code: 0xFF)

    public var description: String { "ATT error 0x" + String(code, radix: 16, uppercase: false) }
}
