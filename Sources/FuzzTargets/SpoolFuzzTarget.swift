import MQTT

extension FuzzTarget {
    /// A spool segment as recovery reads it after a crash: whole records up to the first torn or corrupt one.
    /// The input also goes in as one record's body under a valid header, so the body's parser is reached
    /// without the fuzzer forging a CRC-32.
    static let spool = FuzzTarget(
        name: "spool",
        summary: "the durable spool's segment files as recovery reads them after a crash (records, CRC, bodies)"
    ) { bytes in
        var offset = 0
        while offset < bytes.count, let (record, size) = SpoolRecordCodec.wholeRecord(in: bytes, at: offset) {
            precondition(SpoolRecordCodec.encode(record) == Array(bytes[offset..<(offset + size)]),
                         "a spooled record re-encodes differently")
            offset += size
        }
        var framed: [UInt8] = []
        framed.appendLittleEndian(UInt32(bytes.count))
        framed.appendLittleEndian(CRC32.checksum(bytes))
        framed += bytes
        if let record = try? SpoolRecordCodec.decode(framed[...]) {
            precondition(SpoolRecordCodec.encode(record) == framed, "a spooled body re-encodes differently")
        }
    }
}

private extension [UInt8] {
    mutating func appendLittleEndian(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}
