/// The samples of a PPG (photoplethysmography) data frame: every frame type the SDK decodes — raw 0, 4, 5, 6,
/// 9 and 14, compressed 0, 7, 8, 10 and 13.
///
/// Layouts: `polarofficial/polar-ble-sdk` Android `pmd/model/PpgData.kt` (`parseDataFromDataFrame` and the
/// `dataFrom…` functions it dispatches to), Tables 15–21 of `technical_documentation/online_measurement.pdf`;
/// vectors in `PpgDataTest.kt`. Compressed frames use 24-bit references:
///
/// | frame | channels | sample |
/// |---|---|---|
/// | raw 0, compressed 0 | 4 | three PPG values and ambient light (the Verity Sense / OH1 stream) |
/// | compressed 7 | 17 | 16 PPG values, status |
/// | compressed 8 | 25 | 24 PPG values, status |
/// | compressed 10 | 21 | 8 red, 6 green, 6 infrared, status (the SDK's order) |
/// | compressed 13 | 3 | 2 PPG values, status |
/// | raw 4, 9 | 36 bytes | 12 integration counts (u8), then 12 pairs of 3-bit TIA gains, channel 1 and 2 |
/// | raw 14 | 3 bytes | one integration count and one gain pair |
/// | raw 5 | 4 bytes | operation mode (u32) |
/// | raw 6 | 8 bytes | sport id (u64); the SDK reads the first 8 bytes only, so does this decoder |
///
/// Scaling follows the SDK: compressed 0 multiplies every value by the factor, the others only when it is not
/// exactly 1. The status is kept as the 24-bit number (the SDK spells it out as a list of binary digits).
/// The SDK has a decoder for raw type 10 that nothing calls; a raw type 10 frame is `unknownIdentifier` here
/// as it is refused there.
public enum PMDPPGData {
    public enum Sample: Sendable, Hashable {
        /// Raw and compressed type 0.
        case ppgAndAmbient(ppg: [Int32], ambient: Int32)
        /// Compressed 7, 8 and 13.
        case channels(ppg: [Int32], status: UInt32)
        /// Compressed 10.
        case redGreenInfrared(red: [Int32], green: [Int32], infrared: [Int32], status: UInt32)
        /// Raw 4, 9 and 14: the sensor's integration counts and amplifier gains.
        case integrationAndGain(integrations: [UInt8], channel1Gains: [UInt8], channel2Gains: [UInt8])
        /// Raw 5.
        case operationMode(UInt32)
        /// Raw 6.
        case sportID(UInt64)
    }

    public static func decode(_ frame: PMDDataFrame, factor: Float = 1) throws(GATTCodecError) -> [Sample] {
        try frame.requireType(.ppg)
        return frame.isCompressed ? try decodeCompressed(frame, factor: factor) : try decodeRaw(frame)
    }

    private static func decodeCompressed(_ frame: PMDDataFrame, factor: Float) throws(GATTCodecError) -> [Sample] {
        let channels: Int = switch frame.frameType {
        case 0: 4
        case 7: 17
        case 8: 25
        case 10: 21
        case 13: 3
        default: throw frame.unsupported()
        }
        let samples = try PMDDeltaCompression.decode(frame.content, channels: channels, resolution: 24)
        func scaled(_ values: ArraySlice<Int32>) -> [Int32] { values.map { PMDScaling.scaled($0, by: factor) } }
        func status(_ value: Int32) -> UInt32 { UInt32(bitPattern: value) & 0xFF_FFFF }
        return samples.map { (sample) -> Sample in
            switch frame.frameType {
            case 0:
                let values = sample.map { PMDScaling.integer(Float($0) * factor) }
                return .ppgAndAmbient(ppg: Array(values[0..<3]), ambient: values[3])
            case 10:
                return .redGreenInfrared(red: scaled(sample[0..<8]), green: scaled(sample[8..<14]),
                                         infrared: scaled(sample[14..<20]), status: status(sample[20]))
            default:
                return .channels(ppg: scaled(sample.dropLast()), status: status(sample[sample.count - 1]))
            }
        }
    }

    private static func decodeRaw(_ frame: PMDDataFrame) throws(GATTCodecError) -> [Sample] {
        var reader = ByteReader(frame.content)
        var samples: [Sample] = []
        switch frame.frameType {
        case 0:
            while !reader.isAtEnd {
                let values = [try reader.readSignedPMD(width: 3), try reader.readSignedPMD(width: 3),
                              try reader.readSignedPMD(width: 3), try reader.readSignedPMD(width: 3)]
                samples.append(.ppgAndAmbient(ppg: Array(values[0..<3]), ambient: values[3]))
            }
        case 4, 9, 14:
            let pairs = frame.frameType == 14 ? 1 : 12
            while !reader.isAtEnd {
                let integrations = Array(try reader.readBytes(frame.frameType == 14 ? 1 : 12))
                let gains = Array(try reader.readBytes(2 * pairs))
                samples.append(.integrationAndGain(integrations: integrations,
                                                   channel1Gains: stride(from: 0, to: gains.count, by: 2).map { gains[$0] & 0x07 },
                                                   channel2Gains: stride(from: 1, to: gains.count, by: 2).map { gains[$0] & 0x07 }))
            }
        case 5:
            while !reader.isAtEnd { samples.append(.operationMode(try reader.read(UInt32.self))) }
        case 6:
            samples.append(.sportID(try reader.read(UInt64.self)))
        default:
            throw frame.unsupported()
        }
        return samples
    }

    /// A raw type 0 frame (three PPG values and ambient per sample, 24 bits each); throws `outOfRange` for a
    /// sample without exactly three PPG values or a value outside 24 signed bits.
    public static func rawFrame(_ samples: [(ppg: [Int32], ambient: Int32)], timestamp: UInt64) throws(GATTCodecError) -> PMDDataFrame {
        var content: [UInt8] = []
        for sample in samples {
            guard sample.ppg.count == 3 else { throw .outOfRange(field: "PMD PPG channels", value: sample.ppg.count) }
            for value in sample.ppg + [sample.ambient] { try appendSigned(value, width: 3, to: &content, field: "PMD PPG value") }
        }
        return PMDDataFrame(.ppg, timestamp: timestamp, frameType: 0, isCompressed: false, content: content)
    }
}
