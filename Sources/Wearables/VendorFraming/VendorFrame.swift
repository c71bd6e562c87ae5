/// CRC-16/CCITT-FALSE: polynomial 0x1021, initial value 0xFFFF, no reflection, no final XOR.
/// The check value ("123456789") is 0x29B1.
public enum FrameCRC16 {
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc: UInt16 = 0xFFFF
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 {
                crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
            }
        }
        return crc
    }
}

/// Why reassembled bytes are not a frame. The receiver drops such a frame and counts it; it never answers it
/// (the requester's retransmission recovers).
public enum VendorFrameError: Error, Equatable, Sendable {
    /// Fewer bytes than the 6 of an empty frame.
    case truncated(expected: Int, actual: Int)
    /// The length field (`declared`) is not the number of payload bytes received (`actual`).
    case lengthMismatch(declared: Int, actual: Int)
    /// `expected` is the CRC of the bytes received, `actual` the CRC the frame carried.
    case checksumMismatch(expected: UInt16, actual: UInt16)
}

/// `opcode u8 | sequence u8 | payload length u16 | payload | CRC-16 u16`, all little-endian, the CRC over every
/// byte before it (docs/protocols/gofit.md, "Frames").
///
/// Only the envelope: what the opcode and payload mean is `GoFITRequest`'s, `GoFITResponse`'s and `GoFITEvent`'s.
public struct VendorFrame: Sendable, Equatable {
    /// Opcode, sequence and length before the payload, the CRC after it.
    public static let overhead = 6

    public var opcode: UInt8
    public var sequence: UInt8
    /// At most 65,535 bytes, what the length field can say.
    public var payload: [UInt8]

    public init(opcode: UInt8, sequence: UInt8, payload: [UInt8] = []) {
        self.opcode = opcode
        self.sequence = sequence
        self.payload = payload
    }

    public func encoded() -> [UInt8] {
        precondition(payload.count <= Int(UInt16.max), "a GoFIT frame's payload is at most 65,535 bytes")
        var writer = ByteWriter()
        writer.write(opcode)
        writer.write(sequence)
        writer.write(UInt16(payload.count))
        writer.write(contentsOf: payload)
        writer.write(FrameCRC16.checksum(writer.bytes))
        return writer.bytes
    }

    /// Checks the length field first (so a frame cut short is a length mismatch, not a checksum one), then the CRC.
    public init(decoding bytes: [UInt8]) throws(VendorFrameError) {
        guard bytes.count >= Self.overhead else { throw .truncated(expected: Self.overhead, actual: bytes.count) }
        let declared = Int(bytes[2]) | Int(bytes[3]) << 8
        let received = bytes.count - Self.overhead
        guard declared == received else { throw .lengthMismatch(declared: declared, actual: received) }
        let carried = UInt16(bytes[bytes.count - 2]) | UInt16(bytes[bytes.count - 1]) << 8
        let computed = FrameCRC16.checksum(bytes[..<(bytes.count - 2)])
        guard carried == computed else { throw .checksumMismatch(expected: computed, actual: carried) }
        self.init(opcode: bytes[0], sequence: bytes[1], payload: Array(bytes[4..<(bytes.count - 2)]))
    }
}
