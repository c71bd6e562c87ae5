/// What the PMD control point indicates after a request: 0xF0, the request's op code, its measurement type,
/// a status, a "more" byte, then the parameters (settings, status bytes, …).
///
/// Layout: `polarofficial/polar-ble-sdk` Android `pmd/PmdControlPointResponse.kt`, vectors in
/// `BlePmdClientControlPointResponseTest.kt`. The op code and type are kept as sent (the SDK's Android enum
/// lookup would crash on an unknown op code); the status too, so a driver can report the device's number as
/// `vendor_code` even when `PMDResponseStatus` has no name for it. The Android SDK reads "more" and the
/// parameters only from a successful response; this codec keeps whatever bytes were sent, and `more` follows
/// Android (false for an error).
public struct PMDControlPointResponse: Sendable, Hashable {
    public static let responseCode: UInt8 = 0xF0

    public var opCode: UInt8
    public var measurementTypeByte: UInt8
    public var statusCode: UInt8
    /// The fifth byte, nil when the response ends after the status (as error responses may).
    public var moreByte: UInt8?
    public var parameters: [UInt8]

    public init(opCode: UInt8, measurementTypeByte: UInt8, statusCode: UInt8, moreByte: UInt8? = 0, parameters: [UInt8] = []) {
        self.opCode = opCode
        self.measurementTypeByte = measurementTypeByte
        self.statusCode = statusCode
        self.moreByte = parameters.isEmpty ? moreByte : moreByte ?? 0
        self.parameters = parameters
    }

    public var status: PMDResponseStatus? { PMDResponseStatus(rawValue: statusCode) }
    public var isSuccess: Bool { statusCode == PMDResponseStatus.success.rawValue }
    public var measurementType: PMDMeasurementType? { PMDMeasurementType(typeByte: measurementTypeByte) }

    /// True when another response with more parameters follows (the SDK joins their parameters: `append`).
    public var more: Bool { isSuccess && (moreByte ?? 0) != 0 }

    /// Joins the parameters of a follow-up response, as the SDK's `sendPmdCommand` does, and takes its "more".
    public mutating func append(_ next: PMDControlPointResponse) {
        parameters += next.parameters
        moreByte = next.moreByte
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> PMDControlPointResponse {
        var reader = ByteReader(bytes)
        let code = try reader.readUInt8()
        guard code == responseCode else { throw .unknownIdentifier(field: "PMD control point response code", value: Int(code)) }
        let opCode = try reader.readUInt8()
        let type = try reader.readUInt8()
        let status = try reader.readUInt8()
        let more = try reader.isAtEnd ? nil : reader.readUInt8()
        return PMDControlPointResponse(opCode: opCode, measurementTypeByte: type, statusCode: status, moreByte: more,
                                       parameters: Array(try reader.readBytes(reader.remainingCount)))
    }

    public func encode() -> [UInt8] {
        [Self.responseCode, opCode, measurementTypeByte, statusCode] + (moreByte.map { [$0] } ?? []) + parameters
    }
}

/// Anything the PMD control point indicates: a response to a request, or the device's own notice that it
/// stopped online measurements (op code 1 from the service, then the types; `PmdControlPointCommandServiceToClient`
/// and `BlePMDClient.processPmdCpCommand`; vectors in `BlePmdClientTest.kt`, "process measurement stop control
/// point command"). Any other first byte is `unknownIdentifier`, which the SDK logs and drops.
public enum PMDControlPointNotice: Sendable, Hashable {
    case response(PMDControlPointResponse)
    /// The type bytes as sent; `PMDMeasurementType(typeByte:)` names them.
    case measurementsStopped([UInt8])

    public static let measurementStoppedCode: UInt8 = 0x01

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> PMDControlPointNotice {
        guard let first = bytes.first else { throw .truncated(expected: 1, actual: 0) }
        if first == measurementStoppedCode { return .measurementsStopped(Array(bytes.dropFirst())) }
        return .response(try PMDControlPointResponse.decode(bytes))
    }

    public func encode() -> [UInt8] {
        switch self {
        case .response(let response): response.encode()
        case .measurementsStopped(let types): [Self.measurementStoppedCode] + types
        }
    }
}
