/// The requests of the vendor service's Control characteristic (docs/protocols/actigraph.md, "Vendor service").
/// Responses carry the opcode | 0x80, as in GoFIT framing; that is the frame's business, not this enum's.
public enum ActiGraphOpcode: UInt8, Sendable, CaseIterable {
    case status = 0x01
    case setStreams = 0x10
    case epochOpen = 0x20
    case epochPage = 0x21
    case epochAck = 0x22
}

/// The first byte of every response payload: 0x80 for success, otherwise 0x80 | one of the SDK's error codes
/// (seed 004), so the code a user sees as `vendor_code` is the code the SDK would have reported.
public struct ActiGraphStatus: RawRepresentable, Sendable, Equatable, Hashable {
    public static let ok = ActiGraphStatus(rawValue: 0x80)

    public var rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// A failure status carrying `sdkCode` (0…127).
    public init(sdkCode: UInt8) { self.init(rawValue: 0x80 | (sdkCode & 0x7F)) }

    public var isOK: Bool { rawValue == Self.ok.rawValue }

    /// The SDK's error code: the status without its response bit.
    public var sdkCode: UInt8 { rawValue & 0x7F }

    /// The SDK's name for `sdkCode`, nil for codes seed 004 does not list.
    public var sdkDescription: String? {
        switch sdkCode {
        case 0: "No Device Connected"
        case 1: "Device Not Found"
        case 2: "Device Enumeration in Progress"
        case 3: "Unrecognized Configuration"
        case 4: "SDK Access Disabled"
        case 5: "Device Connection Failed"
        case 6: "Wireless Transfer Error"
        case 7: "Epoch Download Error"
        case 8: "Date Format Error"
        case 9: "Invalid ActiGraph Device"
        case 10: "Existing Connection Found"
        case 11: "The Last Configuration Request Received Failed"
        default: nil
        }
    }

    /// The contract's error for a failed request, per the doc's SDK-code table, `vendorCode` the SDK code; nil
    /// for success. Codes the table maps to nothing (2, 4) and codes the SDK does not list are `INTERNAL`, and a
    /// byte without the response bit is `INTERNAL` without a vendor code: the Link answered something we
    /// cannot read, so no SDK code can be claimed for it.
    public var commandError: CommandError? {
        if isOK { return nil }
        guard rawValue & 0x80 != 0 else {
            return CommandError(.internalError, "the ActiGraph Link answered status 0x\(Self.hex(rawValue)), which lacks the response bit 0x80")
        }
        let code: CommandError.Code = switch sdkCode {
        case 0, 5: .deviceDisconnected
        case 1: .deviceNotFound
        case 3, 8, 10, 11: .invalidValue
        case 9: .notSupported
        default: .internalError
        }
        let name = sdkDescription ?? "unknown error"
        return CommandError(code, "the ActiGraph Link answered \(name) (SDK code \(sdkCode))", vendorCode: Int(sdkCode))
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count == 1 ? "0" + digits : digits
    }
}
