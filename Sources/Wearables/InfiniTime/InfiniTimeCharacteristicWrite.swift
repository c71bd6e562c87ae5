/// One write a request turns into: which characteristic, the bytes, and the request field it came from (for
/// errors and answers). Requests are parsed into these before anything is written, so a bad field writes nothing.
public struct InfiniTimeCharacteristicWrite: Sendable, Equatable {
    public let characteristic: String
    public let bytes: [UInt8]
    public let field: String

    public init(_ characteristic: String, _ bytes: [UInt8], field: String) {
        self.characteristic = characteristic
        self.bytes = bytes
        self.field = field
    }
}

extension CommandError {
    /// A value the codec refused, as the request's `INVALID_VALUE`.
    static func invalid(_ reader: RequestReader, _ key: String, _ error: GATTCodecError, got value: DeviceValue?) -> CommandError {
        let rule: String
        switch error {
        case .outOfRange: rule = "is out of the range the watch accepts"
        default: rule = "cannot be sent to the watch (\(error))"
        }
        return value.map { reader.invalid(key, rule, got: $0) } ?? CommandError(.invalidValue, "\(reader.name(key)) \(rule)")
    }
}
