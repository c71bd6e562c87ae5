/// The samples of a PPI (peak-to-peak interval) data frame, raw frame type 0: heart rate u8, interval u16 ms,
/// error estimate u16 ms, flags u8 per sample.
///
/// Layout: `polarofficial/polar-ble-sdk` Android `pmd/model/PpiData.kt` and Table 22 of
/// `technical_documentation/online_measurement.pdf`; vector in `PpiDataTest.kt`. Flags: bit 0 the blocker
/// (the interval is not valid), bit 1 skin contact (0 for poor or none), bit 2 — the SDK reads it as "skin
/// contact supported" and its public `PolarPpiSample.skinContactSupported` says so; the document words it
/// the other way round ("1 if sensor contact is not supported"). This codec follows the SDK and keeps the byte.
/// Sample times: `PMDSampleTiming.ppiTimestamps`.
public enum PMDPPIData {
    public struct Sample: Sendable, Hashable {
        public var heartRate: UInt8
        public var intervalMilliseconds: UInt16
        public var errorEstimateMilliseconds: UInt16
        /// As sent, bits 3–7 included (reserved).
        public var flags: UInt8

        public init(heartRate: UInt8, intervalMilliseconds: UInt16, errorEstimateMilliseconds: UInt16, flags: UInt8) {
            self.heartRate = heartRate
            self.intervalMilliseconds = intervalMilliseconds
            self.errorEstimateMilliseconds = errorEstimateMilliseconds
            self.flags = flags
        }

        public init(heartRate: UInt8, intervalMilliseconds: UInt16, errorEstimateMilliseconds: UInt16,
                    blocker: Bool, skinContact: Bool, skinContactSupported: Bool) {
            self.init(heartRate: heartRate, intervalMilliseconds: intervalMilliseconds,
                      errorEstimateMilliseconds: errorEstimateMilliseconds,
                      flags: (blocker ? 1 : 0) | (skinContact ? 2 : 0) | (skinContactSupported ? 4 : 0))
        }

        /// The interval is not valid (movement blocked the measurement).
        public var blocker: Bool { flags & 0x01 != 0 }
        public var skinContact: Bool { flags & 0x02 != 0 }
        public var skinContactSupported: Bool { flags & 0x04 != 0 }
    }

    public static let sampleLength = 6

    public static func decode(_ frame: PMDDataFrame) throws(GATTCodecError) -> [Sample] {
        try frame.requireType(.ppi)
        guard !frame.isCompressed, frame.frameType == 0 else { throw frame.unsupported() }
        var reader = ByteReader(frame.content)
        var samples: [Sample] = []
        while !reader.isAtEnd {
            samples.append(Sample(heartRate: try reader.readUInt8(), intervalMilliseconds: try reader.read(UInt16.self),
                                  errorEstimateMilliseconds: try reader.read(UInt16.self), flags: try reader.readUInt8()))
        }
        return samples
    }

    public static func frame(_ samples: [Sample], timestamp: UInt64) -> PMDDataFrame {
        var writer = ByteWriter()
        for sample in samples {
            writer.write(sample.heartRate)
            writer.write(sample.intervalMilliseconds)
            writer.write(sample.errorEstimateMilliseconds)
            writer.write(sample.flags)
        }
        return PMDDataFrame(.ppi, timestamp: timestamp, frameType: 0, isCompressed: false, content: writer.bytes)
    }
}
