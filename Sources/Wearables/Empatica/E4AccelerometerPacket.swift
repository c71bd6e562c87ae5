/// One notification of the accelerometer characteristic (0x3EA3): x, y, z triplets of signed bytes, oldest
/// first — as many whole triplets as the value holds, at least six (18 bytes).
///
/// Reverse-engineered: `mountainaught/e4-python-server` `main.py` (`StreamProcessor.__handle_acc`, the loop
/// `while i + 3 <= len(data)`) and Gadgetbridge's `EmpaticaE4DeviceSupport.onCharacteristicChanged`
/// (`while (buffer.remaining() >= 3)`) both read signed-byte x, y, z triplets and convert with g = raw / 64
/// (±2 g full scale, which the EmpaLink SDK reference also gives). The SDK documents 32 Hz.
///
/// **How many triplets.** Both sources decode every whole triplet a notification holds and drop a 1–2 byte
/// remainder without a word; neither fixes a count. This codec does the same: a 20-byte value (the most a notification
/// carries at the default ATT MTU, and the length of the E4's BVP and EDA values) is six triplets and a 2-byte
/// tail; 21 bytes are seven triplets; 24 bytes eight. The tail is kept as sent (`trailingBytes`, so encoding gives
/// the bytes back) and its meaning is unknown — the EDA packet's last two bytes are a counter, this tail may be
/// one too; nothing uses it. A value shorter than six triplets (18 bytes) is refused as `truncated`, as before:
/// the E4's BVP and EDA values are 20 bytes and another experimental viewer reads exactly the first 18 bytes of
/// this one, so a shorter value is more likely cut off than a real packet. Times come from `E4SampleClock`,
/// which counts the samples a packet really held.
public struct E4AccelerometerPacket: GATTCharacteristicValue, Hashable {
    public static let characteristicUUID = E4UUID.Short.accelerometer
    /// The fewest triplets a packet may hold; also how many the simulated E4 sends per packet (the count that
    /// sets its 187.5 ms packet interval at 32 Hz).
    public static let samplesPerPacket = 6
    /// The shortest value decoded: six triplets.
    public static let byteCount = samplesPerPacket * 3
    /// Raw counts per standard gravity.
    public static let countsPerG = 64.0

    /// One reading in raw counts, kept as sent so that `decode(encode(x)) == x`.
    public struct Sample: Hashable, Sendable {
        public let x: Int8
        public let y: Int8
        public let z: Int8

        public init(x: Int8, y: Int8, z: Int8) {
            self.x = x
            self.y = y
            self.z = z
        }

        /// In standard gravities (g): −2.0 … +1.984.
        public var gravities: (x: Double, y: Double, z: Double) {
            (Double(x) / countsPerG, Double(y) / countsPerG, Double(z) / countsPerG)
        }

        /// In m/s², the unit of the contract's `accelerometer` sensor (1 g = 9.80665 m/s², the standard
        /// gravity of the CGPM).
        public var metresPerSecondSquared: (x: Double, y: Double, z: Double) {
            let g = gravities
            return (g.x * 9.80665, g.y * 9.80665, g.z * 9.80665)
        }
    }

    public let samples: [Sample]
    /// The 0–2 bytes after the last whole triplet, kept as sent; not a sample.
    public let trailingBytes: [UInt8]

    /// Throws `outOfRange` of the sample count below `samplesPerPacket` samples, and of the trailing length for
    /// three or more trailing bytes (they would decode as another sample): only these encode to a value that
    /// decodes back.
    public init(samples: [Sample], trailingBytes: [UInt8] = []) throws(GATTCodecError) {
        guard samples.count >= Self.samplesPerPacket else {
            throw .outOfRange(field: "E4 accelerometer sample count", value: samples.count)
        }
        guard trailingBytes.count < 3 else {
            throw .outOfRange(field: "E4 accelerometer trailing length", value: trailingBytes.count)
        }
        self.samples = samples
        self.trailingBytes = trailingBytes
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> E4AccelerometerPacket {
        var reader = ByteReader(bytes)
        var samples: [Sample] = []
        samples.reserveCapacity(max(samplesPerPacket, bytes.count / 3))
        // The first six triplets must be there (a shorter value is `truncated` at the byte that is missing); after
        // them, every whole triplet that is.
        while samples.count < samplesPerPacket || reader.remainingCount >= 3 {
            let x = Int8(bitPattern: try reader.readUInt8())
            let y = Int8(bitPattern: try reader.readUInt8())
            let z = Int8(bitPattern: try reader.readUInt8())
            samples.append(Sample(x: x, y: y, z: z))
        }
        return try E4AccelerometerPacket(samples: samples, trailingBytes: Array(try reader.readBytes(reader.remainingCount)))
    }

    public func encode() -> [UInt8] {
        samples.flatMap { [UInt8(bitPattern: $0.x), UInt8(bitPattern: $0.y), UInt8(bitPattern: $0.z)] } + trailingBytes
    }
}
