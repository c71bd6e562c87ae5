/// The status byte of a PMD control point response: 0 is success, every other number an error the device
/// reports for the request.
///
/// Every code `polarofficial/polar-ble-sdk` names: Android `pmd/PmdControlPointResponse.kt`
/// (`PmdControlPointResponseCode`) and iOS `pmd/PmdControlPointResponse.swift` (`PmdResponseCode`), which agree.
/// A driver reports an error with `vendor_code` = `rawValue`, so the number is kept as sent even when no case
/// names it (`PMDControlPointResponse.statusCode`).
public enum PMDResponseStatus: UInt8, Sendable, Hashable, CaseIterable {
    case success = 0
    case invalidOpCode = 1
    case invalidMeasurementType = 2
    case notSupported = 3
    case invalidLength = 4
    case invalidParameter = 5
    /// Starting a running measurement or stopping a stopped one.
    case alreadyInState = 6
    case invalidResolution = 7
    case invalidSampleRate = 8
    case invalidRange = 9
    /// The ATT MTU is too small for the stream's frames (the H10 needs more than the default 23 for ECG).
    case invalidMTU = 10
    case invalidNumberOfChannels = 11
    case invalidState = 12
    case deviceInCharger = 13
    case diskFull = 14

    /// The SDK's own wording (iOS `PmdResponseCode.description`), for logs and error messages.
    public var summary: String {
        switch self {
        case .success: "success"
        case .invalidOpCode: "invalid op code"
        case .invalidMeasurementType: "invalid measurement type"
        case .notSupported: "not supported"
        case .invalidLength: "invalid length"
        case .invalidParameter: "invalid parameter"
        case .alreadyInState: "already in state"
        case .invalidResolution: "invalid resolution"
        case .invalidSampleRate: "invalid sample rate"
        case .invalidRange: "invalid range"
        case .invalidMTU: "invalid MTU"
        case .invalidNumberOfChannels: "invalid number of channels"
        case .invalidState: "invalid state"
        case .deviceInCharger: "device in charger"
        case .diskFull: "disk full"
        }
    }
}
