/// Polar's delta compression of multi-channel samples, the content of every compressed PMD frame: one
/// reference sample (each channel in ⌈resolution / 8⌉ little-endian bytes, signed), then blocks of
/// delta width (u8, bits), sample count (u8) and `count × channels` signed deltas of that width, packed
/// least-significant bit first, channel by channel; each delta sample adds to the one before it.
///
/// Source: `polarofficial/polar-ble-sdk` Android `pmd/BlePMDClient.kt` (`parseDeltaFramesAll`,
/// `parseDeltaFrameRefSamples`, `parseDeltaFrame`), section 4.3 of `technical_documentation/online_measurement.pdf`;
/// vectors in `BlePmdClientParsersTest.kt`. Sums wrap at 32 bits as the SDK's `Int` does (the gyroscope's float
/// channels rely on it: their deltas are added to IEEE-754 bit patterns). Where the SDK's arithmetic breaks down
/// this decoder does what the format means instead: a 1-bit delta of 1 is −1 (the SDK makes it `Int.MAX_VALUE`),
/// and a block of width 0 is `count` samples equal to the one before (the SDK drops them). A width above 32,
/// a resolution outside 1…32 and a channel count below 1 are `outOfRange`; a block that runs past the end is
/// `truncated`.
public enum PMDDeltaCompression {
    /// The samples, reference first; each has `channels` values.
    public static func decode(_ bytes: [UInt8], channels: Int, resolution: Int) throws(GATTCodecError) -> [[Int32]] {
        try checkShape(channels: channels, resolution: resolution)
        var reader = ByteReader(bytes)
        let referenceWidth = (resolution + 7) / 8
        let signBits = Int32(bitPattern: UInt32.max << UInt32(resolution - 1))
        var reference: [Int32] = []
        for _ in 0..<channels {
            var value = signExtended(try reader.readBytes(referenceWidth))
            if value & signBits != 0 { value |= signBits }
            reference.append(value)
        }
        var samples = [reference]
        while !reader.isAtEnd {
            let width = Int(try reader.readUInt8())
            guard width <= 32 else { throw .outOfRange(field: "PMD delta width", value: width) }
            let count = Int(try reader.readUInt8())
            let block = try reader.readBytes((count * channels * width + 7) / 8)
            var bits = BitReader(block)
            samples.reserveCapacity(samples.count + count)
            for _ in 0..<count {
                var next = samples[samples.count - 1]
                for channel in 0..<channels { next[channel] &+= bits.readSigned(width: width) }
                samples.append(next)
            }
        }
        return samples
    }

    /// The bytes `decode` turns back into `samples` (reference first, each with `channels` values, each value
    /// within `resolution` signed bits): blocks of at most 255 samples, each with the narrowest width that holds
    /// its deltas (at least 1). Throws `outOfRange` for a shape `decode` refuses, a sample with the wrong
    /// number of values, or a reference value outside the resolution.
    public static func encode(_ samples: [[Int32]], channels: Int, resolution: Int) throws(GATTCodecError) -> [UInt8] {
        try checkShape(channels: channels, resolution: resolution)
        guard let reference = samples.first else { throw .outOfRange(field: "PMD delta sample count", value: 0) }
        for sample in samples where sample.count != channels {
            throw .outOfRange(field: "PMD delta sample channels", value: sample.count)
        }
        let referenceWidth = (resolution + 7) / 8
        var bytes: [UInt8] = []
        for value in reference {
            guard signedWidth(of: value) <= resolution else { throw .outOfRange(field: "PMD reference sample", value: Int(value)) }
            bytes += (0..<referenceWidth).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        var start = 1
        while start < samples.count {
            let end = min(samples.count, start + 255)
            let deltas = (start..<end).map { index in (0..<channels).map { samples[index][$0] &- samples[index - 1][$0] } }
            let width = deltas.joined().map(signedWidth(of:)).max() ?? 1
            bytes += [UInt8(width), UInt8(end - start)]
            var bits = BitWriter()
            for delta in deltas { for value in delta { bits.write(value, width: width) } }
            bytes += bits.bytes
            start = end
        }
        return bytes
    }

    private static func checkShape(channels: Int, resolution: Int) throws(GATTCodecError) {
        guard channels >= 1 else { throw .outOfRange(field: "PMD delta channels", value: channels) }
        guard (1...32).contains(resolution) else { throw .outOfRange(field: "PMD delta resolution", value: resolution) }
    }

    /// Little-endian, sign-extended from the top bit of the last byte (the SDK's `convertArrayToSignedInt`).
    private static func signExtended(_ bytes: ArraySlice<UInt8>) -> Int32 {
        var value: UInt32 = 0
        for (index, byte) in bytes.enumerated() { value |= UInt32(byte) << (8 * index) }
        let shift = UInt32(32 - 8 * bytes.count)
        return Int32(bitPattern: value << shift) >> shift
    }

    /// The fewest two's-complement bits that hold `value`, at least 1.
    static func signedWidth(of value: Int32) -> Int {
        let magnitudeBits = value < 0 ? 32 - (~value).leadingZeroBitCount : 32 - value.leadingZeroBitCount
        return min(32, magnitudeBits + 1)
    }
}

/// Reads bit fields least-significant bit first across bytes.
private struct BitReader {
    let bytes: ArraySlice<UInt8>
    var position = 0

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    /// The next `width` bits (0…32) as a two's-complement number; the caller sized `bytes` to hold them.
    mutating func readSigned(width: Int) -> Int32 {
        guard width > 0 else { return 0 }
        var value: UInt64 = 0
        for bit in 0..<width {
            let index = position + bit
            if bytes[bytes.startIndex + index / 8] & (1 << (index % 8)) != 0 { value |= 1 << UInt64(bit) }
        }
        position += width
        let shift = UInt64(64 - width)
        return Int32(truncatingIfNeeded: Int64(bitPattern: value << shift) >> shift)
    }
}

/// Writes bit fields least-significant bit first, the counterpart of `BitReader`.
private struct BitWriter {
    var bytes: [UInt8] = []
    var count = 0

    mutating func write(_ value: Int32, width: Int) {
        let bits = UInt32(bitPattern: value)
        for bit in 0..<width {
            if count % 8 == 0 { bytes.append(0) }
            if bits & (1 << UInt32(bit)) != 0 { bytes[bytes.count - 1] |= 1 << UInt8(count % 8) }
            count += 1
        }
    }
}
