/// The samples of an accelerometer data frame, in milli-G: raw frame types 0, 1 and 2 (x, y, z as signed 8-,
/// 16- or 24-bit values) and compressed types 0 and 1 (3 channels, 16-bit reference, delta blocks).
///
/// Layouts: `polarofficial/polar-ble-sdk` Android `pmd/model/AccData.kt` and Tables 7–9 of
/// `technical_documentation/online_measurement.pdf`; vectors in `AccDataTest.kt`. Raw values are mG as sent
/// (the document warns that raw type 0 is in G on the Verity Sense; the SDK does not convert it, and neither
/// does this decoder). Compressed type 0 is in G: value × factor × 1000 (the SDK's "special Wolfi type").
/// Compressed type 1 is value × factor when the factor is not exactly 1. Scaled values are converted as
/// Kotlin's `Float.toInt()` does (`PMDScaling.integer`).
public enum PMDAccelerationData {
    public struct Sample: Sendable, Hashable {
        public var x: Int32
        public var y: Int32
        public var z: Int32

        public init(x: Int32, y: Int32, z: Int32) {
            self.x = x
            self.y = y
            self.z = z
        }
    }

    /// `factor` is the start response's (`PMDSettings.factor`, 1 when the device sent none); only compressed
    /// frames use it.
    public static func decode(_ frame: PMDDataFrame, factor: Float = 1) throws(GATTCodecError) -> [Sample] {
        try frame.requireType(.acc)
        if frame.isCompressed {
            let samples = try PMDDeltaCompression.decode(frame.content, channels: 3, resolution: 16)
            switch frame.frameType {
            case 0:
                let milliG = factor * 1000
                return samples.map {
                    Sample(x: PMDScaling.integer(Float($0[0]) * milliG), y: PMDScaling.integer(Float($0[1]) * milliG),
                           z: PMDScaling.integer(Float($0[2]) * milliG))
                }
            case 1:
                return samples.map {
                    Sample(x: PMDScaling.scaled($0[0], by: factor), y: PMDScaling.scaled($0[1], by: factor),
                           z: PMDScaling.scaled($0[2], by: factor))
                }
            default: throw frame.unsupported()
            }
        }
        guard frame.frameType <= 2 else { throw frame.unsupported() }
        let width = Int(frame.frameType) + 1
        var reader = ByteReader(frame.content)
        var samples: [Sample] = []
        samples.reserveCapacity(frame.content.count / (3 * width))
        while !reader.isAtEnd {
            samples.append(Sample(x: try reader.readSignedPMD(width: width), y: try reader.readSignedPMD(width: width),
                                  z: try reader.readSignedPMD(width: width)))
        }
        return samples
    }

    /// A raw frame of type 0, 1 or 2 (`bytesPerAxis` 1, 2 or 3): throws `outOfRange` for another width or a
    /// value it cannot hold.
    public static func rawFrame(_ samples: [Sample], bytesPerAxis: Int = 2, timestamp: UInt64) throws(GATTCodecError) -> PMDDataFrame {
        guard (1...3).contains(bytesPerAxis) else { throw .outOfRange(field: "PMD ACC bytes per axis", value: bytesPerAxis) }
        var content: [UInt8] = []
        content.reserveCapacity(samples.count * 3 * bytesPerAxis)
        for sample in samples {
            for value in [sample.x, sample.y, sample.z] {
                try appendSigned(value, width: bytesPerAxis, to: &content, field: "PMD ACC mG")
            }
        }
        return PMDDataFrame(.acc, timestamp: timestamp, frameType: UInt8(bytesPerAxis - 1), isCompressed: false, content: content)
    }

    /// A compressed type 1 frame (factor 1: the values are mG as given); throws `outOfRange` for a value outside
    /// 16 signed bits in the first sample, or no samples.
    public static func compressedFrame(_ samples: [Sample], timestamp: UInt64) throws(GATTCodecError) -> PMDDataFrame {
        let content = try PMDDeltaCompression.encode(samples.map { [$0.x, $0.y, $0.z] }, channels: 3, resolution: 16)
        return PMDDataFrame(.acc, timestamp: timestamp, frameType: 1, isCompressed: true, content: content)
    }
}
