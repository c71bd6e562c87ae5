/// One notification of the accelerometer characteristic (0x3EA3): six x, y, z triplets of signed bytes,
/// 18 bytes, oldest first.
///
/// Reverse-engineered: `mountainaught/e4-python-server` `main.py` (`StreamProcessor.__handle_acc`) and
/// Gadgetbridge's `EmpaticaE4DeviceSupport` both read signed-byte x, y, z triplets and convert with
/// g = raw / 64 (±2 g full scale, which the EmpaLink SDK reference also gives). The SDK documents 32 Hz.
///
/// **The triplet count is modeled.** Both sources decode however many whole triplets arrive and say nothing
/// of the count. We fix it at six because six triplets (18 bytes) are the most that fit the 20-byte value of
/// a notification at the default ATT MTU, and another experimental viewer only ever reads the first 18 bytes
/// of this characteristic. A fixed count is what lets `E4SampleClock` time the samples and lets decoding tell
/// a cut-off packet from a whole one; anything else is refused (`truncated` if short, `outOfRange` of the
/// length if long) rather than guessed at. Change `samplesPerPacket` once a capture shows the real count.
public struct E4AccelerometerPacket: GATTCharacteristicValue, Hashable {
    public static let characteristicUUID = E4UUID.Short.accelerometer
    public static let samplesPerPacket = 6
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

    /// Throws `outOfRange` unless there are exactly `samplesPerPacket` samples, the only count that encodes
    /// to a packet that decodes back.
    public init(samples: [Sample]) throws(GATTCodecError) {
        guard samples.count == Self.samplesPerPacket else {
            throw .outOfRange(field: "E4 accelerometer sample count", value: samples.count)
        }
        self.samples = samples
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> E4AccelerometerPacket {
        var reader = ByteReader(bytes)
        var samples: [Sample] = []
        samples.reserveCapacity(samplesPerPacket)
        for _ in 0..<samplesPerPacket {
            let x = Int8(bitPattern: try reader.readUInt8())
            let y = Int8(bitPattern: try reader.readUInt8())
            let z = Int8(bitPattern: try reader.readUInt8())
            samples.append(Sample(x: x, y: y, z: z))
        }
        guard reader.isAtEnd else { throw .outOfRange(field: "E4 accelerometer packet length", value: bytes.count) }
        return try E4AccelerometerPacket(samples: samples)
    }

    public func encode() -> [UInt8] {
        samples.flatMap { [UInt8(bitPattern: $0.x), UInt8(bitPattern: $0.y), UInt8(bitPattern: $0.z)] }
    }
}
