/// The samples of an ECG data frame: raw frame types 0–3 (the SDK decodes no compressed ECG).
///
/// Layouts: `polarofficial/polar-ble-sdk` Android `pmd/model/EcgData.kt`; vectors in `EcgDataTest.kt`. Type 0
/// (the H10's) is a signed 24-bit µV value per sample (Table 10 of `technical_documentation/online_measurement.pdf`).
/// Type 1: 14-bit unsigned µV in bytes 0–1, then a flags byte (bit 0 oversampling, bits 1–2 skin contact,
/// bits 3–4 contact impedance). Type 2: 18-bit unsigned µV in bytes 0–2, then bits 2–4 of byte 2 an ECG data
/// tag and bits 5–7 a pace data tag. Type 3: two signed 24-bit values and a status byte per sample (the SDK
/// names them no further). A partial last sample is `truncated`, a compressed or other frame type
/// `unknownIdentifier`.
public enum PMDECGData {
    public struct Sample: Sendable, Hashable {
        public var microvolts: Int32
        public var overSampling = false
        public var skinContact: UInt8 = 0
        public var contactImpedance: UInt8 = 0
        public var ecgDataTag: UInt8 = 0
        public var paceDataTag: UInt8 = 0

        public init(microvolts: Int32, overSampling: Bool = false, skinContact: UInt8 = 0, contactImpedance: UInt8 = 0,
                    ecgDataTag: UInt8 = 0, paceDataTag: UInt8 = 0) {
            self.microvolts = microvolts
            self.overSampling = overSampling
            self.skinContact = skinContact
            self.contactImpedance = contactImpedance
            self.ecgDataTag = ecgDataTag
            self.paceDataTag = paceDataTag
        }
    }

    /// Frame type 3's sample (the SDK's `EcgSampleFrameType3`).
    public struct TwoChannelSample: Sendable, Hashable {
        public var data0: Int32
        public var data1: Int32
        public var status: UInt8

        public init(data0: Int32, data1: Int32, status: UInt8) {
            self.data0 = data0
            self.data1 = data1
            self.status = status
        }
    }

    public enum Samples: Sendable, Hashable {
        case microvolts([Sample])
        case twoChannel([TwoChannelSample])

        public var count: Int {
            switch self {
            case .microvolts(let samples): samples.count
            case .twoChannel(let samples): samples.count
            }
        }
    }

    public static func decode(_ frame: PMDDataFrame) throws(GATTCodecError) -> Samples {
        try frame.requireType(.ecg)
        guard !frame.isCompressed else { throw frame.unsupported() }
        var reader = ByteReader(frame.content)
        switch frame.frameType {
        case 0:
            var samples: [Sample] = []
            while !reader.isAtEnd { samples.append(Sample(microvolts: try reader.readSignedPMD(width: 3))) }
            return .microvolts(samples)
        case 1:
            var samples: [Sample] = []
            while !reader.isAtEnd {
                let bytes = try reader.readBytes(3).map { $0 }
                samples.append(Sample(microvolts: Int32(bytes[0]) | Int32(bytes[1] & 0x3F) << 8,
                                      overSampling: bytes[2] & 0x01 != 0, skinContact: (bytes[2] & 0x06) >> 1,
                                      contactImpedance: (bytes[2] & 0x18) >> 3))
            }
            return .microvolts(samples)
        case 2:
            var samples: [Sample] = []
            while !reader.isAtEnd {
                let bytes = try reader.readBytes(3).map { $0 }
                samples.append(Sample(microvolts: Int32(bytes[0]) | Int32(bytes[1]) << 8 | Int32(bytes[2] & 0x03) << 16,
                                      ecgDataTag: (bytes[2] & 0x1C) >> 2, paceDataTag: (bytes[2] & 0xE0) >> 5))
            }
            return .microvolts(samples)
        case 3:
            var samples: [TwoChannelSample] = []
            while !reader.isAtEnd {
                samples.append(TwoChannelSample(data0: try reader.readSignedPMD(width: 3), data1: try reader.readSignedPMD(width: 3),
                                                status: try reader.readUInt8()))
            }
            return .twoChannel(samples)
        default:
            throw frame.unsupported()
        }
    }

    /// A raw type 0 frame (what the H10 sends): throws `outOfRange` for a value outside 24 signed bits.
    public static func frame(microvolts: [Int32], timestamp: UInt64) throws(GATTCodecError) -> PMDDataFrame {
        var content: [UInt8] = []
        content.reserveCapacity(microvolts.count * 3)
        for value in microvolts { try appendSigned(value, width: 3, to: &content, field: "PMD ECG µV") }
        return PMDDataFrame(.ecg, timestamp: timestamp, frameType: 0, isCompressed: false, content: content)
    }
}
