/// The value read from the PMD control point: 0x0F, then a bitmap of the measurement types the device offers.
///
/// Layout: `polarofficial/polar-ble-sdk` Android `pmd/PmdMeasurementType.kt` (`fromByteArray`): byte 1 bit 0 ECG,
/// 1 PPG, 2 ACC, 3 PPI, 5 gyroscope, 6 magnetometer, 7 skin temperature; byte 2 bit 1 SDK mode, 2 location,
/// 3 pressure, 4 temperature, 5 offline recording, 6 offline heart rate. Byte 1 bit 4 and byte 2 bits 0 and 7
/// name nothing the SDK knows; they are kept (`bitmap`) so that encoding gives the bytes back. The SDK does not
/// check the first byte; this codec keeps it as sent too, and reads any bytes after the third as further
/// bitmap bytes for the same reason.
public struct PMDFeatures: Sendable, Hashable {
    /// The first byte of the value: 0x0F on every device the SDK's tests show ("feature read" response code).
    public static let responseCode: UInt8 = 0x0F

    public var code: UInt8
    /// The bitmap bytes after the code, at least two.
    public var bitmap: [UInt8]

    /// Where each type's bit is: (index into `bitmap`, bit).
    static let positions: [PMDMeasurementType: (byte: Int, bit: Int)] = [
        .ecg: (0, 0), .ppg: (0, 1), .acc: (0, 2), .ppi: (0, 3), .gyroscope: (0, 5), .magnetometer: (0, 6),
        .skinTemperature: (0, 7), .sdkMode: (1, 1), .location: (1, 2), .pressure: (1, 3), .temperature: (1, 4),
        .offlineRecording: (1, 5), .offlineHeartRate: (1, 6),
    ]

    public init(code: UInt8 = PMDFeatures.responseCode, bitmap: [UInt8]) {
        self.code = code
        self.bitmap = bitmap
    }

    /// The value a device offering `types` sends.
    public init(offering types: Set<PMDMeasurementType>) {
        var bitmap: [UInt8] = [0, 0]
        for type in types {
            guard let position = Self.positions[type] else { continue }
            bitmap[position.byte] |= 1 << position.bit
        }
        self.init(bitmap: bitmap)
    }

    /// The measurement types whose bit is set.
    public var supportedTypes: Set<PMDMeasurementType> {
        Set(Self.positions.compactMap { type, position in
            position.byte < bitmap.count && bitmap[position.byte] & (1 << position.bit) != 0 ? type : nil
        })
    }

    /// Needs the code and both bitmap bytes: the SDK indexes bytes 1 and 2 unconditionally.
    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> PMDFeatures {
        var reader = ByteReader(bytes)
        let code = try reader.readUInt8()
        let bitmap = Array(try reader.readBytes(max(2, reader.remainingCount)))
        return PMDFeatures(code: code, bitmap: bitmap)
    }

    public func encode() -> [UInt8] { [code] + bitmap }
}
