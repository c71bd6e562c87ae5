/// The samples of a magnetometer data frame, in gauss: compressed frame types 0 (3 channels × factor) and 1
/// (3 channels in milligauss × factor, and a calibration status channel). The SDK decodes no raw magnetometer
/// frame.
///
/// Layouts: `polarofficial/polar-ble-sdk` Android `pmd/model/MagData.kt` (`CalibrationStatus`: 0 unknown,
/// 1 poor, 2 ok, 3 good, anything else not available), Tables 13–14 of
/// `technical_documentation/online_measurement.pdf`; vectors in `MagDataTest.kt`.
public enum PMDMagnetometerData {
    public enum Calibration: Int32, Sendable, Hashable {
        case unknown = 0
        case poor = 1
        case ok = 2
        case good = 3
    }

    public struct Sample: Sendable, Hashable {
        public var x: Float
        public var y: Float
        public var z: Float
        /// Nil for frame type 0 and for a status number the SDK does not name.
        public var calibration: Calibration?

        public init(x: Float, y: Float, z: Float, calibration: Calibration? = nil) {
            self.x = x
            self.y = y
            self.z = z
            self.calibration = calibration
        }
    }

    public static func decode(_ frame: PMDDataFrame, factor: Float = 1) throws(GATTCodecError) -> [Sample] {
        try frame.requireType(.magnetometer)
        guard frame.isCompressed else { throw frame.unsupported() }
        func scaled(_ value: Int32) -> Float { factor == 1 ? Float(value) : Float(value) * factor }
        switch frame.frameType {
        case 0:
            return try PMDDeltaCompression.decode(frame.content, channels: 3, resolution: 16).map {
                Sample(x: scaled($0[0]), y: scaled($0[1]), z: scaled($0[2]))
            }
        case 1:
            return try PMDDeltaCompression.decode(frame.content, channels: 4, resolution: 16).map {
                Sample(x: scaled($0[0]) / 1000, y: scaled($0[1]) / 1000, z: scaled($0[2]) / 1000,
                       calibration: Calibration(rawValue: $0[3]))
            }
        default:
            throw frame.unsupported()
        }
    }
}
