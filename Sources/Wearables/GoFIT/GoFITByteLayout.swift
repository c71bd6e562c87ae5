/// Reading a GoFIT history kind: an unknown one is `unknownIdentifier`, since the bytes after it cannot be framed.
extension ByteReader {
    mutating func readHistoryKind() throws(GATTCodecError) -> GoFITHistoryKind {
        let raw = try readUInt8()
        guard let kind = GoFITHistoryKind(rawValue: raw) else { throw .unknownIdentifier(field: "kind", value: Int(raw)) }
        return kind
    }
}
