/// What a host writes to the PSFTP MTU characteristic (before `PSFTPFrame.split`): the "RFC60" header, two bytes
/// little-endian whose bit 15 tells a query from a request, then the body.
///
/// `polarofficial/polar-ble-sdk` Android `psftp/BlePsFtpUtils.kt`, `makeCompleteMessageStream`: a **request** is
/// the length of its `PbPFtpOperation` (15 bits, bit 15 clear), the operation, then a file's bytes for a PUT or
/// MERGE (`BlePsFtpClient.write`; nothing for GET and REMOVE); a **query** is its id (`PSFTPQuery`, 15 bits) with
/// bit 15 set, then its parameters message if it has one. (Notifications go to the other characteristic with a
/// one-byte header; H10 recording does not use them, so they are not here.)
///
/// `decode` is for simulated sensors, which read what a driver writes. The operation stays bytes here; the
/// H10 layer (`H10RecordingRequest`) reads and writes the protobuf.
public enum PSFTPRequestMessage: Sendable, Hashable {
    case request(operation: [UInt8], data: [UInt8] = [])
    case query(id: UInt16, parameters: [UInt8] = [])

    /// The 15 bits of the header.
    public static let maximumHeaderValue = 0x7FFF

    /// Throws `outOfRange` for an operation longer than 32 767 bytes or a query id above 32 767.
    public func encode() throws(GATTCodecError) -> [UInt8] {
        switch self {
        case .request(let operation, let data):
            guard operation.count <= Self.maximumHeaderValue else { throw .outOfRange(field: "PSFTP operation length", value: operation.count) }
            return [UInt8(operation.count & 0xFF), UInt8(operation.count >> 8)] + operation + data
        case .query(let id, let parameters):
            guard id <= Self.maximumHeaderValue else { throw .outOfRange(field: "PSFTP query id", value: Int(id)) }
            return [UInt8(id & 0xFF), UInt8(id >> 8) | 0x80] + parameters
        }
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> PSFTPRequestMessage {
        guard bytes.count >= 2 else { throw .truncated(expected: 2, actual: bytes.count) }
        let value = Int(bytes[0]) | Int(bytes[1] & 0x7F) << 8
        if bytes[1] & 0x80 != 0 { return .query(id: UInt16(value), parameters: Array(bytes[2...])) }
        guard bytes.count >= 2 + value else { throw .truncated(expected: 2 + value, actual: bytes.count) }
        return .request(operation: Array(bytes[2..<2 + value]), data: Array(bytes[(2 + value)...]))
    }
}

/// The PSFTP query ids H10 recording uses (`PbPFtpQuery`, `pftp_request.proto`).
public enum PSFTPQuery: UInt16, Sendable, CaseIterable {
    case requestStartRecording = 14
    case requestStopRecording = 15
    case requestRecordingStatus = 16
}
