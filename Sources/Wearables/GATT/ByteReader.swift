/// The order of a multi-byte field on the wire. Bluetooth SIG characteristics are little-endian throughout;
/// some vendor protocols (Bose) are big-endian.
package enum ByteOrder: Sendable {
    case littleEndian
    case bigEndian
}

/// Reads fixed-width fields off the front of a characteristic value.
///
/// Every read checks the remaining length first and throws `truncated` with the total length the field needed,
/// so no codec indexes past the end of device-supplied bytes. Shared by the standard and the vendor codecs.
package struct ByteReader {
    private let bytes: [UInt8]
    private(set) var offset = 0

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package var remainingCount: Int { bytes.count - offset }
    package var isAtEnd: Bool { offset >= bytes.count }

    package mutating func readBytes(_ count: Int) throws(GATTCodecError) -> ArraySlice<UInt8> {
        guard count >= 0, remainingCount >= count else {
            throw .truncated(expected: offset + max(count, 0), actual: bytes.count)
        }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    package mutating func readUInt8() throws(GATTCodecError) -> UInt8 {
        let byte = try readBytes(1)
        return byte[byte.startIndex]
    }

    package mutating func read<T: FixedWidthInteger & UnsignedInteger>(
        _: T.Type, byteOrder: ByteOrder = .littleEndian
    ) throws(GATTCodecError) -> T {
        try readInteger(byteCount: MemoryLayout<T>.size, byteOrder: byteOrder)
    }

    /// For 24-bit fields such as the PLX device and sensor status.
    package mutating func readUInt24(byteOrder: ByteOrder = .littleEndian) throws(GATTCodecError) -> UInt32 {
        try readInteger(byteCount: 3, byteOrder: byteOrder)
    }

    private mutating func readInteger<T: FixedWidthInteger & UnsignedInteger>(
        byteCount: Int, byteOrder: ByteOrder
    ) throws(GATTCodecError) -> T {
        let raw = try readBytes(byteCount)
        var value: T = 0
        for (index, byte) in raw.enumerated() {
            let shift = byteOrder == .littleEndian ? index : byteCount - 1 - index
            value |= T(byte) << (8 * shift)
        }
        return value
    }
}

/// Appends fixed-width fields; the counterpart of `ByteReader`, used by every `encode()`.
package struct ByteWriter {
    package private(set) var bytes: [UInt8] = []

    package init() {}

    package mutating func write(_ byte: UInt8) { bytes.append(byte) }

    package mutating func write(contentsOf other: some Sequence<UInt8>) { bytes.append(contentsOf: other) }

    package mutating func write<T: FixedWidthInteger & UnsignedInteger>(_ value: T, byteOrder: ByteOrder = .littleEndian) {
        writeInteger(value, byteCount: MemoryLayout<T>.size, byteOrder: byteOrder)
    }

    /// Writes the low 24 bits of `value`; callers have already checked that nothing is lost.
    package mutating func writeUInt24(_ value: UInt32, byteOrder: ByteOrder = .littleEndian) {
        writeInteger(value, byteCount: 3, byteOrder: byteOrder)
    }

    private mutating func writeInteger<T: FixedWidthInteger>(_ value: T, byteCount: Int, byteOrder: ByteOrder) {
        for index in 0..<byteCount {
            let shift = byteOrder == .littleEndian ? index : byteCount - 1 - index
            bytes.append(UInt8(truncatingIfNeeded: value >> (8 * shift)))
        }
    }
}
