/// The samples of a gyroscope data frame, in degrees per second: compressed frame types 0 (3 channels of
/// 16-bit integers × factor) and 1 (3 channels of IEEE-754 singles, delta-coded on their bit patterns, ×
/// factor). The SDK decodes no raw gyroscope frame.
///
/// Layouts: `polarofficial/polar-ble-sdk` Android `pmd/model/GyrData.kt`, Tables 11–12 of
/// `technical_documentation/online_measurement.pdf`; vectors in `GyrDataTest.kt`.
public enum PMDGyroscopeData {
    public struct Sample: Sendable, Hashable {
        public var x: Float
        public var y: Float
        public var z: Float

        public init(x: Float, y: Float, z: Float) {
            self.x = x
            self.y = y
            self.z = z
        }
    }

    public static func decode(_ frame: PMDDataFrame, factor: Float = 1) throws(GATTCodecError) -> [Sample] {
        try frame.requireType(.gyroscope)
        guard frame.isCompressed else { throw frame.unsupported() }
        switch frame.frameType {
        case 0:
            return try PMDDeltaCompression.decode(frame.content, channels: 3, resolution: 16).map {
                Sample(x: Float($0[0]) * factor, y: Float($0[1]) * factor, z: Float($0[2]) * factor)
            }
        case 1:
            func value(_ bits: Int32) -> Float {
                let float = Float(bitPattern: UInt32(bitPattern: bits))
                return factor == 1 ? float : float * factor
            }
            return try PMDDeltaCompression.decode(frame.content, channels: 3, resolution: 32).map {
                Sample(x: value($0[0]), y: value($0[1]), z: value($0[2]))
            }
        default:
            throw frame.unsupported()
        }
    }

    /// A compressed type 0 frame of raw 16-bit values (the unit is value × the factor the start response gives).
    public static func compressedFrame(raw samples: [[Int32]], timestamp: UInt64) throws(GATTCodecError) -> PMDDataFrame {
        let content = try PMDDeltaCompression.encode(samples, channels: 3, resolution: 16)
        return PMDDataFrame(.gyroscope, timestamp: timestamp, frameType: 0, isCompressed: true, content: content)
    }
}
