/// The code of a device's status-0 PSFTP frame: `PbPFtpError` (`polarofficial/polar-ble-sdk`
/// `…/src/sdk/proto/pftp_error.proto`). A struct, not an enum: a device may send a code the schema does not list
/// (300–399 are "reserved for communication interface specific errors"), and the driver should still report it.
public struct PSFTPErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The schema's names, for messages.
    static let names: [UInt16: String] = [
        0: "OPERATION_SUCCEEDED", 1: "REBOOTING", 2: "TRY_AGAIN",
        100: "UNIDENTIFIED_HOST_ERROR", 101: "INVALID_COMMAND", 102: "INVALID_PARAMETER", 103: "NO_SUCH_FILE_OR_DIRECTORY",
        104: "DIRECTORY_EXISTS", 105: "FILE_EXISTS", 106: "OPERATION_NOT_PERMITTED", 107: "NO_SUCH_USER", 108: "TIMEOUT",
        200: "UNIDENTIFIED_DEVICE_ERROR", 201: "NOT_IMPLEMENTED", 202: "SYSTEM_BUSY", 203: "INVALID_CONTENT",
        204: "CHECKSUM_FAILURE", 205: "DISK_FULL", 206: "PREREQUISITE_NOT_MET", 207: "INSUFFICIENT_BUFFER",
        208: "WAIT_FOR_IDLING", 209: "BATTERY_TOO_LOW",
    ]

    public static let noSuchFileOrDirectory = PSFTPErrorCode(rawValue: 103)
    public static let systemBusy = PSFTPErrorCode(rawValue: 202)
    public static let diskFull = PSFTPErrorCode(rawValue: 205)

    /// The schema's name ("NO_SUCH_FILE_OR_DIRECTORY"), or nil for a code it does not list.
    public var name: String? { Self.names[rawValue] }

    public var description: String { name.map { "\($0) (\(rawValue))" } ?? "PSFTP error \(rawValue)" }
}
