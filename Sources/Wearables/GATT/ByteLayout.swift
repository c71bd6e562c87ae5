/// Reading helpers the vendor layouts share (GoFIT, ActiGraph): signed fields, flags, and the rule that a layout
/// ends exactly where its bytes end.
extension ByteReader {
    package mutating func readInt16() throws(GATTCodecError) -> Int16 { Int16(bitPattern: try read(UInt16.self)) }

    package mutating func readInt32() throws(GATTCodecError) -> Int32 { Int32(bitPattern: try read(UInt32.self)) }

    /// Every vendor layout has a fixed or declared length, so bytes left over mean the value was misread (a wrong
    /// record kind, a count that does not match): `truncated` naming the length the layout accounts for
    /// (`expected`, here less than `actual`). Our modeled vendor services have no room for fields appended later.
    package func expectEnd() throws(GATTCodecError) {
        guard isAtEnd else { throw .truncated(expected: offset, actual: offset + remainingCount) }
    }


    /// 0 or 1; anything else is `reservedValue`, since guessing could turn a garbled byte into a claim.
    package mutating func readFlag(field: String) throws(GATTCodecError) -> Bool {
        let raw = try readUInt8()
        guard raw <= 1 else { throw .reservedValue(field: field, value: Int(raw)) }
        return raw == 1
    }
}

extension ByteWriter {
    package mutating func write(_ value: Int16) { write(UInt16(bitPattern: value)) }

    package mutating func write(_ value: Int32) { write(UInt32(bitPattern: value)) }

    package mutating func write(_ flag: Bool) { write(UInt8(flag ? 1 : 0)) }
}

/// A layout that reads itself from and writes itself into a byte stream; the whole-value forms (exactly
/// one value's bytes, nothing left over) come with it, so each type's `init(decoding:)` and `encoded()` are one
/// line.
package protocol ByteLayout: ByteWritable {
    init(reading reader: inout ByteReader) throws(GATTCodecError)
}

extension ByteLayout {
    package init(whole bytes: [UInt8]) throws(GATTCodecError) {
        var reader = ByteReader(bytes)
        try self.init(reading: &reader)
        try reader.expectEnd()
    }
}

/// Something written into a byte stream; `wholeBytes` is the value alone.
package protocol ByteWritable {
    func write(to writer: inout ByteWriter)
}

extension ByteWritable {
    package var wholeBytes: [UInt8] {
        var writer = ByteWriter()
        write(to: &writer)
        return writer.bytes
    }
}
