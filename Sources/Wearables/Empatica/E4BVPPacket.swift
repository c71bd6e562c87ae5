/// One notification of the BVP characteristic (0x3EA1): eleven green/red pairs of 7-bit signed deltas and a
/// 6-bit trailer, bit-packed most-significant bit first into 20 bytes.
///
/// ```
/// bit 0 (MSB of byte 0)                                                              bit 159 (LSB of byte 19)
/// | green₀ 7 | red₀ 7 | green₁ 7 | red₁ 7 | … | green₁₀ 7 | red₁₀ 7 | trailer 6 |
/// ```
///
/// Reverse-engineered: `mountainaught/e4-python-server` `main.py` (`StreamProcessor.__handle_bvp`, "Stage 1:
/// Decode", transcribed by its author from the decompiled `PacketHandler_handlePacketForE4` of Empatica's
/// library). That loop emits 7 values per 7 bytes plus one more every seventh byte, i.e. the bit stream above;
/// it sign-extends each 7-bit value (−64…63), pairs them as (green, red) for 11 pairs, and also sign-extends
/// the low 6 bits of byte 19, which it then never uses — kept here as `trailer`, meaning unknown. That this
/// layout and `main.py`'s loop decode every one of 100 000 random packets identically was checked when this
/// codec was written.
///
/// The source calls the values deltas: each is the change of its light channel since the previous sample.
/// Turning them back into a pulse wave (`E4BVPDeltaDecoder`) is therefore part of reading BVP, and which
/// channel carries the pulse, and with which sign, is our interpretation (see there). At the SDK's 64 Hz a
/// packet covers 11/64 s.
///
/// Every 20-byte value decodes and re-encodes to itself; shorter values are `truncated`, longer ones
/// `outOfRange` of the length.
public struct E4BVPPacket: GATTCharacteristicValue, Hashable {
    public static let characteristicUUID = E4UUID.Short.bvp
    public static let samplesPerPacket = 11
    public static let byteCount = 20
    /// What a 7-bit two's-complement field holds.
    public static let deltaRange: ClosedRange<Int8> = -64...63
    public static let maximumTrailer: UInt8 = 0x3F

    /// One sample's change of the green and the red light channel, in sensor counts.
    public struct Delta: Hashable, Sendable {
        public let green: Int8
        public let red: Int8

        /// Throws `outOfRange` for a delta outside −64…63, which 7 bits cannot carry.
        public init(green: Int8, red: Int8) throws(GATTCodecError) {
            guard deltaRange.contains(green) else { throw .outOfRange(field: "E4 BVP green delta", value: Int(green)) }
            guard deltaRange.contains(red) else { throw .outOfRange(field: "E4 BVP red delta", value: Int(red)) }
            self.green = green
            self.red = red
        }
    }

    /// Oldest first.
    public let deltas: [Delta]
    /// The last 6 bits of the packet, kept as sent (0…63; `main.py` reads them as signed and drops them).
    public let trailer: UInt8

    public init(deltas: [Delta], trailer: UInt8 = 0) throws(GATTCodecError) {
        guard deltas.count == Self.samplesPerPacket else {
            throw .outOfRange(field: "E4 BVP sample count", value: deltas.count)
        }
        guard trailer <= Self.maximumTrailer else { throw .outOfRange(field: "E4 BVP trailer", value: Int(trailer)) }
        self.deltas = deltas
        self.trailer = trailer
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> E4BVPPacket {
        var reader = ByteReader(bytes)
        var bits = BitReader(try reader.readBytes(byteCount))
        guard reader.isAtEnd else { throw .outOfRange(field: "E4 BVP packet length", value: bytes.count) }
        var deltas: [Delta] = []
        deltas.reserveCapacity(samplesPerPacket)
        for _ in 0..<samplesPerPacket {
            let green = signExtended7(bits.read(7))
            let red = signExtended7(bits.read(7))
            deltas.append(try Delta(green: green, red: red))
        }
        return try E4BVPPacket(deltas: deltas, trailer: bits.read(6))
    }

    public func encode() -> [UInt8] {
        var bits = BitWriter()
        for delta in deltas {
            bits.write(UInt8(bitPattern: delta.green), width: 7)
            bits.write(UInt8(bitPattern: delta.red), width: 7)
        }
        bits.write(trailer, width: 6)
        return bits.bytes
    }

    /// The low 7 bits as a two's-complement number: shift the field's sign bit into bit 7, then shift back
    /// arithmetically.
    private static func signExtended7(_ field: UInt8) -> Int8 { Int8(bitPattern: field << 1) >> 1 }
}

/// Reads fields of up to 8 bits, most-significant bit first, from bytes whose count the caller has checked.
private struct BitReader {
    private let bytes: ArraySlice<UInt8>
    private var index: Int
    private var buffer: UInt16 = 0
    private var bufferedBits = 0

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    /// Gives zeros past the end rather than trapping; `E4BVPPacket` never reads that far.
    mutating func read(_ width: Int) -> UInt8 {
        while bufferedBits < width {
            let next = index < bytes.endIndex ? bytes[index] : 0
            index += 1
            buffer = buffer << 8 | UInt16(next)
            bufferedBits += 8
        }
        bufferedBits -= width
        let field = UInt8(truncatingIfNeeded: buffer >> bufferedBits) & UInt8((1 << width) - 1)
        buffer &= (1 << bufferedBits) - 1
        return field
    }
}

/// Appends fields of up to 8 bits, most-significant bit first; the writer of `BitReader`'s layout.
private struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private var buffer: UInt16 = 0
    private var bufferedBits = 0

    mutating func write(_ value: UInt8, width: Int) {
        buffer = buffer << width | UInt16(value & UInt8((1 << width) - 1))
        bufferedBits += width
        while bufferedBits >= 8 {
            bufferedBits -= 8
            bytes.append(UInt8(truncatingIfNeeded: buffer >> bufferedBits))
            buffer &= (1 << bufferedBits) - 1
        }
    }
}
