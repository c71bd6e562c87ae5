import Testing
@testable import Wearables

/// PMD data frames of every measurement type, with the vectors of `polarofficial/polar-ble-sdk`'s Android tests
/// under `…/api/ble/model/gatt/client/pmd/model/` (file and test named at each). Most of them stamp their frame
/// 2 000 000 000 ns after the Polar epoch: 00 94 35 77 00 00 00 00.
@Suite("Polar PMD data frames")
struct PolarDataFrameTests {
    static let twoSeconds: [UInt8] = [0x00, 0x94, 0x35, 0x77, 0x00, 0x00, 0x00, 0x00]

    static func frame(_ type: UInt8, _ frameType: UInt8, _ content: [UInt8], time: [UInt8] = twoSeconds) throws -> PMDDataFrame {
        let bytes = [type] + time + [frameType] + content
        let frame = try PMDDataFrame.decode(bytes)
        #expect(frame.encode() == bytes)
        return frame
    }

    @Test("the header: type, little-endian nanoseconds, frame type with the compression bit")
    func header() throws {
        let frame = try Self.frame(0x02, 0x81, [0xAA])
        #expect(frame.measurementType == .acc && frame.timestamp == 2_000_000_000)
        #expect(frame.frameType == 1 && frame.isCompressed && frame.content == [0xAA])
        // BlePmdClientTest "process not supported frame type": 9 bytes, one short of a header.
        #expect(throws: GATTCodecError.truncated(expected: 10, actual: 9)) {
            try PMDDataFrame.decode([0x01, 0x38, 0x6C, 0x31, 0x72, 0xA4, 0xD3, 0x23, 0x0D])
        }
    }

    @Test("EcgDataTest 'process raw ecg data type 0': 02 80 FF, 02 80 00 are -32766 and 32770 µV")
    func ecgType0() throws {
        let frame = try Self.frame(0x00, 0x00, [0x02, 0x80, 0xFF, 0x02, 0x80, 0x00])
        #expect(try PMDECGData.decode(frame) == .microvolts([PMDECGData.Sample(microvolts: -32766), PMDECGData.Sample(microvolts: 32770)]))
        #expect(try PMDECGData.frame(microvolts: [-32766, 32770], timestamp: 2_000_000_000) == frame)
        // previous frame at 100 ns: the SDK's test expects the last sample at the frame's time.
        #expect(try PMDSampleTiming.timestamps(frameTimestamp: frame.timestamp, previousFrameTimestamp: 100, sampleCount: 2, sampleRate: 0)
                == [1_000_000_050, 2_000_000_000])
        #expect(throws: GATTCodecError.outOfRange(field: "PMD ECG µV", value: 8_388_608)) {
            try PMDECGData.frame(microvolts: [8_388_608], timestamp: 0)
        }
    }

    @Test("EcgDataTest 'process raw ecg data type 1': 14-bit µV 2 and 640 with oversampling, contact and impedance bits")
    func ecgType1() throws {
        let samples = try PMDECGData.decode(try Self.frame(0x00, 0x01, [0x02, 0x80, 0xFF, 0x80, 0x02, 0x00]))
        #expect(samples == .microvolts([
            PMDECGData.Sample(microvolts: 2, overSampling: true, skinContact: 3, contactImpedance: 3),
            PMDECGData.Sample(microvolts: 640),
        ]))
    }

    @Test("EcgDataTest 'process raw ecg data type 2': 18-bit µV 32896 and 262143 with data and pace tags")
    func ecgType2() throws {
        let samples = try PMDECGData.decode(try Self.frame(0x00, 0x02, [0x80, 0x80, 0xFC, 0xFF, 0xFF, 0x03]))
        #expect(samples == .microvolts([
            PMDECGData.Sample(microvolts: 32896, ecgDataTag: 7, paceDataTag: 7),
            PMDECGData.Sample(microvolts: 262_143),
        ]))
    }

    @Test("EcgDataTest 'process raw ecg data type 3': two signed 24-bit values and a status per sample")
    func ecgType3() throws {
        let content: [UInt8] = [0x00, 0x12, 0x03, 0x11, 0x10, 0x04, 0x00, 0x02, 0x80, 0xF0, 0x11, 0x10, 0x04, 0xFF]
        #expect(try PMDECGData.decode(try Self.frame(0x00, 0x03, content)) == .twoChannel([
            PMDECGData.TwoChannelSample(data0: 201_216, data1: 266_257, status: 0),
            PMDECGData.TwoChannelSample(data0: -1_015_806, data1: 266_257, status: 0xFF),
        ]))
    }

    @Test("ECG refuses compressed frames, unknown frame types, a partial sample and another type's frame")
    func ecgRefusals() throws {
        #expect(throws: GATTCodecError.self) { try PMDECGData.decode(try Self.frame(0x00, 0x80, [])) }
        #expect(throws: GATTCodecError.self) { try PMDECGData.decode(try Self.frame(0x00, 0x04, [])) }
        #expect(throws: GATTCodecError.truncated(expected: 6, actual: 5)) {
            try PMDECGData.decode(try Self.frame(0x00, 0x00, [1, 2, 3, 4, 5]))
        }
        #expect(throws: GATTCodecError.unknownIdentifier(field: "PMD ecg frame measurement type", value: 2)) {
            try PMDECGData.decode(try Self.frame(0x02, 0x00, []))
        }
    }

    @Test("AccDataTest 'process acc raw data frame type 1': 36 samples, the first (-9, -1, 999) and (-8, -2, 997) mG")
    func accRawType1() throws {
        let frame = try Self.frame(0x02, 0x01, PolarSDKVectors.accRawType1Content)
        let samples = try PMDAccelerationData.decode(frame)
        #expect(samples.count == 36)
        #expect(samples[0] == PMDAccelerationData.Sample(x: -9, y: -1, z: 999))
        #expect(samples[1] == PMDAccelerationData.Sample(x: -8, y: -2, z: 997))
        #expect(try PMDAccelerationData.rawFrame(samples, bytesPerAxis: 2, timestamp: frame.timestamp) == frame)
        // No previous frame: spread back from the last sample at 52 Hz, as the SDK's test does.
        let times = try PMDSampleTiming.timestamps(frameTimestamp: frame.timestamp, previousFrameTimestamp: nil,
                                                   sampleCount: samples.count, sampleRate: 52)
        #expect(times.last == 2_000_000_000 && times.count == 36)
        #expect(times[0] == UInt64((2_000_000_000 - 35 * 1e9 / 52).rounded(.toNearestOrEven)))
    }

    @Test("raw ACC types 0 and 2 are 8- and 24-bit axes; a frame round-trips through each width")
    func accRawWidths() throws {
        let samples = [PMDAccelerationData.Sample(x: -100, y: 0, z: 127), PMDAccelerationData.Sample(x: 1, y: -128, z: 64)]
        for width in 1...3 {
            let frame = try PMDAccelerationData.rawFrame(samples, bytesPerAxis: width, timestamp: 5)
            #expect(frame.frameType == UInt8(width - 1) && frame.content.count == 6 * width)
            #expect(try PMDAccelerationData.decode(PMDDataFrame.decode(frame.encode())) == samples)
        }
        #expect(throws: GATTCodecError.outOfRange(field: "PMD ACC mG", value: 128)) {
            try PMDAccelerationData.rawFrame([.init(x: 128, y: 0, z: 0)], bytesPerAxis: 1, timestamp: 0)
        }
    }

    @Test("AccDataTest 'process acc compressed data type 0': 57 samples in G × factor 2.44e-4 × 1000, within ±8 G")
    func accCompressedType0() throws {
        let frame = try Self.frame(0x02, 0x80, PolarSDKVectors.accCompressedType0Content)
        let factor: Float = 2.44E-4
        let samples = try PMDAccelerationData.decode(frame, factor: factor)
        #expect(samples.count == 57)
        func expected(_ value: Int32) -> Int32 { PMDScaling.integer(factor * Float(value) * 1000) }
        #expect(samples[0] == .init(x: expected(1905), y: expected(27376), z: expected(-29282)))
        #expect(samples[1] == .init(x: expected(1905 + 190), y: expected(27376 - 105), z: expected(-29282 - 85)))
        #expect(samples.allSatisfy { abs($0.x) <= 8000 && abs($0.y) <= 8000 && abs($0.z) <= 8000 })
        let times = try PMDSampleTiming.timestamps(frameTimestamp: frame.timestamp, previousFrameTimestamp: 100,
                                                   sampleCount: samples.count, sampleRate: 0)
        #expect(times.first == UInt64((100 + Double(2_000_000_000 - 100) / 57).rounded(.toNearestOrEven)))
        #expect(times.last == 2_000_000_000)
    }

    @Test("AccDataTest 'process acc compressed data type 1': (-15, 20, 1008) then (-20, 17, 1008), stamped 100 and 101")
    func accCompressedType1() throws {
        let frame = try Self.frame(0x02, 0x81, [0xF1, 0xFF, 0x14, 0x00, 0xF0, 0x03, 0x06, 0x01, 0x7B, 0x0F, 0x08],
                                   time: [0x65, 0, 0, 0, 0, 0, 0, 0])
        let samples = try PMDAccelerationData.decode(frame)
        #expect(samples == [.init(x: -15, y: 20, z: 1008), .init(x: -20, y: 17, z: 1008)])
        // Half-way times round to even, as Kotlin's `round` does: 100.5 → 100.
        #expect(try PMDSampleTiming.timestamps(frameTimestamp: 101, previousFrameTimestamp: 100, sampleCount: 2, sampleRate: 0) == [100, 101])
        let encoded = try PMDAccelerationData.compressedFrame(samples, timestamp: 101)
        #expect(try PMDAccelerationData.decode(PMDDataFrame.decode(encoded.encode())) == samples)
    }

    @Test("PpiDataTest 'process ppi raw data type 0': HR 128, 32896 ms ± 32896 ms, all flags; then 0 bpm, 1 ms, no flags")
    func ppi() throws {
        let frame = try Self.frame(0x03, 0x00, [0x80, 0x80, 0x80, 0x80, 0x80, 0xFF, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00],
                                   time: [0, 0, 0, 0, 0, 0, 0, 0])
        let samples = try PMDPPIData.decode(frame)
        #expect(samples.count == 2)
        #expect(samples[0].heartRate == 128 && samples[0].intervalMilliseconds == 32896 && samples[0].errorEstimateMilliseconds == 32896)
        #expect(samples[0].blocker && samples[0].skinContact && samples[0].skinContactSupported)
        #expect(samples[1] == PMDPPIData.Sample(heartRate: 0, intervalMilliseconds: 1, errorEstimateMilliseconds: 1,
                                                blocker: false, skinContact: false, skinContactSupported: false))
        #expect(PMDPPIData.frame(samples, timestamp: 0) == frame)
        #expect(PMDSampleTiming.ppiTimestamps(frameTimestamp: 0, intervalsMilliseconds: samples.map(\.intervalMilliseconds)) == [0, 0])
        #expect(PMDSampleTiming.ppiTimestamps(frameTimestamp: 5_000_000_000, intervalsMilliseconds: [800, 1000])
                == [4_000_000_000, 5_000_000_000])
        #expect(throws: GATTCodecError.truncated(expected: 6, actual: 5)) { try PMDPPIData.decode(try Self.frame(0x03, 0x00, [1, 2, 3, 4, 5])) }
    }

    @Test("GyrDataTest 'process gyro compressed data type 0': (-22, 8, 13) then (-23, 11, 16) deg/s at the frame's time")
    func gyroscopeType0() throws {
        let frame = try Self.frame(0x05, 0x80, [0xEA, 0xFF, 0x08, 0x00, 0x0D, 0x00, 0x03, 0x01, 0xDF, 0x00],
                                   time: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F])
        let samples = try PMDGyroscopeData.decode(frame)
        #expect(samples == [.init(x: -22, y: 8, z: 13), .init(x: -23, y: 11, z: 16)])
        #expect(try PMDSampleTiming.timestamps(frameTimestamp: frame.timestamp, previousFrameTimestamp: 100, sampleCount: 2,
                                               sampleRate: 0).last == 9_223_372_036_854_775_807)
        let raw = try PMDDeltaCompression.decode(frame.content, channels: 3, resolution: 16)
        #expect(try PMDGyroscopeData.decode(PMDGyroscopeData.compressedFrame(raw: raw, timestamp: 1)) == samples)
    }

    @Test("GyrDataTest 'process gyro compressed data type 1' (with factor 1 and 0.5): float channels delta-coded on their bits")
    func gyroscopeType1() throws {
        let content: [UInt8] = [0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x20, 0x41, 0x00, 0x00, 0xA0, 0x41, 0x1C, 0x01,
                                0x00, 0x00, 0xA0, 0x01, 0x00, 0x00, 0x08, 0xCD, 0xCC, 0xEC, 0x0D]
        let frame = try Self.frame(0x05, 0x81, content)
        func float(_ bits: UInt32) -> Float { Float(bitPattern: bits) }
        let second = [float(0x3F80_0000 &+ 0x01A0_0000), float(0x4120_0000 &+ 0x0080_0000), float(0x41A0_0000 &+ 0xFDEC_CCCD)]
        #expect(try PMDGyroscopeData.decode(frame) == [.init(x: 1, y: 10, z: 20), .init(x: second[0], y: second[1], z: second[2])])
        #expect(try PMDGyroscopeData.decode(frame, factor: 0.5)
                == [.init(x: 0.5, y: 5, z: 10), .init(x: second[0] * 0.5, y: second[1] * 0.5, z: second[2] * 0.5)])
        #expect(throws: GATTCodecError.self) { try PMDGyroscopeData.decode(try Self.frame(0x05, 0x00, [])) }
    }

    @Test("MagDataTest 'process magnetometer compressed data type 0': (-6430, 5626, 2633) then (-6431, 5627, 2635)")
    func magnetometerType0() throws {
        let frame = try Self.frame(0x06, 0x80, [0xE2, 0xE6, 0xFA, 0x15, 0x49, 0x0A, 0x06, 0x01, 0x7F, 0x20, 0xFC])
        #expect(try PMDMagnetometerData.decode(frame) == [.init(x: -6430, y: 5626, z: 2633), .init(x: -6431, y: 5627, z: 2635)])
    }

    @Test("MagDataTest 'process magnetometer compressed data type 1' (factor 1 and 1.1): milligauss and calibration status")
    func magnetometerType1() throws {
        let frame = try Self.frame(0x06, 0x81, [0x37, 0xFF, 0x51, 0xFD, 0x6C, 0xF6, 0x00, 0x00, 0x03, 0x01, 0xF8, 0x02])
        let samples = try PMDMagnetometerData.decode(frame)
        #expect(samples.count == 2)
        #expect(abs(samples[0].x - -0.201) < 0.00001 && abs(samples[0].y - -0.687) < 0.00001 && abs(samples[0].z - -2.452) < 0.00001)
        #expect(abs(samples[1].x - -0.201) < 0.00001 && abs(samples[1].y - -0.688) < 0.00001 && abs(samples[1].z - -2.449) < 0.00001)
        #expect(samples[0].calibration == .unknown && samples[1].calibration == .poor)
        let scaled = try PMDMagnetometerData.decode(frame, factor: 1.1)
        #expect(abs(scaled[1].y - 1.1 * -0.688) < 0.00001)
    }

    @Test("PpgDataTest 'test raw PPG frame type 0': three PPG values and ambient, signed 24 bits")
    func ppgRawType0() throws {
        let content: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0xFF, 0xFF, 0x7F, 0x00, 0x00, 0x00,
                                0xFF, 0xFF, 0xFF, 0x0F, 0xEF, 0xEF, 0x00, 0x00, 0x80, 0x0F, 0xEF, 0xEF]
        let frame = try Self.frame(0x01, 0x00, content)
        #expect(try PMDPPGData.decode(frame) == [
            .ppgAndAmbient(ppg: [197_121, 394_500, 8_388_607], ambient: 0),
            .ppgAndAmbient(ppg: [-1, -1_052_913, -8_388_608], ambient: -1_052_913),
        ])
        let samples: [(ppg: [Int32], ambient: Int32)] = [([197_121, 394_500, 8_388_607], 0), ([-1, -1_052_913, -8_388_608], -1_052_913)]
        #expect(try PMDPPGData.rawFrame(samples, timestamp: 2_000_000_000) == frame)
    }

    @Test("PpgDataTest 'test raw PPG frame type 4' and 'type 9': integration counts and 3-bit gains of 12 time slots")
    func ppgRawType4And9() throws {
        let type4: [UInt8] = [0x02, 0x7F, 0x06, 0x02, 0x06, 0x04, 0x02, 0x06, 0x03, 0x02, 0x01, 0xFF,
                              0x01, 0x07, 0xFF, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
                              0xF8, 0x7F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0xEF, 0xF8]
        guard case .integrationAndGain(let counts, let gains1, let gains2) = try PMDPPGData.decode(try Self.frame(0x01, 0x04, type4)).first else {
            Issue.record("not an integration sample")
            return
        }
        #expect(counts == Array(type4[0..<12]))
        #expect([gains1[0], gains1[1], gains1[10], gains1[11]] == [1, 7, 1, 7])
        #expect([gains2[0], gains2[1], gains2[10], gains2[11]] == [7, 0, 2, 0])
        let type9: [UInt8] = Array(repeating: 0x06, count: 12) + [0xFF] + Array(repeating: 0, count: 10) + [0xFF, 0x01]
            + Array(repeating: 0, count: 9) + [0xFF, 0xFF]
        guard case .integrationAndGain(_, let g1, let g2) = try PMDPPGData.decode(try Self.frame(0x01, 0x09, type9)).first else {
            Issue.record("not an integration sample")
            return
        }
        #expect([g1[0], g1[1], g1[10], g1[11]] == [7, 0, 0, 7] && [g2[0], g2[1], g2[10], g2[11]] == [0, 0, 0, 7])
    }

    @Test("PpgDataTest 'test raw PPG frame type 5': operation mode FF FF FF FF; raw type 6 a sport id; raw 14 one slot")
    func ppgRawSmallTypes() throws {
        #expect(try PMDPPGData.decode(try Self.frame(0x01, 0x05, [0xFF, 0xFF, 0xFF, 0xFF])) == [.operationMode(0xFFFF_FFFF)])
        #expect(try PMDPPGData.decode(try Self.frame(0x01, 0x06, [0x10, 0, 0, 0, 0, 0, 0, 0])) == [.sportID(16)])
        #expect(try PMDPPGData.decode(try Self.frame(0x01, 0x0E, [0x05, 0x09, 0x0A])) == [.integrationAndGain(integrations: [5], channel1Gains: [1], channel2Gains: [2])])
        #expect(throws: GATTCodecError.self) { try PMDPPGData.decode(try Self.frame(0x01, 0x0A, [])) }
    }

    @Test("PpgDataTest 'test compressed PPG frame type 13': 84 samples, the first 2759080, 2537320, status 3")
    func ppgCompressedType13() throws {
        let samples = try PMDPPGData.decode(try Self.frame(0x01, 0x8D, PolarSDKVectors.ppgCompressedType13Content))
        #expect(samples.count == 84)
        #expect(samples.first == .channels(ppg: [2_759_080, 2_537_320], status: 3))
    }

    @Test("compressed PPG types 0, 7, 8 and 10 split their channels as the SDK does")
    func ppgCompressedLayouts() throws {
        for (frameType, channels) in [(0, 4), (7, 17), (8, 25), (10, 21)] as [(UInt8, Int)] {
            let values = (0..<channels).map { Int32($0 + 1) }
            let content = try PMDDeltaCompression.encode([values, values.map { $0 + 1 }], channels: channels, resolution: 24)
            let samples = try PMDPPGData.decode(try Self.frame(0x01, 0x80 | frameType, content), factor: 1)
            #expect(samples.count == 2)
            switch (frameType, samples[0]) {
            case (0, .ppgAndAmbient(let ppg, let ambient)): #expect(ppg == [1, 2, 3] && ambient == 4)
            case (7, .channels(let ppg, let status)), (8, .channels(let ppg, let status)):
                #expect(ppg == Array(values.dropLast()) && status == UInt32(channels))
            case (10, .redGreenInfrared(let red, let green, let infrared, let status)):
                #expect(red == Array(1...8) && green == Array(9...14) && infrared == Array(15...20) && status == 21)
            default: Issue.record("frame type \(frameType) gave \(samples[0])")
            }
        }
    }
}
