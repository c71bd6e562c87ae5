import Testing
@testable import Wearables

/// The delta decoder with `BlePmdClientParsersTest.kt`'s vectors and the sample clock with
/// `PmdTimeStampUtilsTest.kt`'s (`polarofficial/polar-ble-sdk`, Android tests under `…/gatt/client/pmd/`).
@Suite("Polar PMD delta compression and sample timing")
struct PolarDeltaAndTimingTests {
    @Test("'parse reference sample when resolution16': FF FF, 00 00, FF 7F, 00 80 are -1, 0, 32767, -32768")
    func reference16() throws {
        let samples = try PMDDeltaCompression.decode([0xFF, 0xFF, 0x00, 0x00, 0xFF, 0x7F, 0x00, 0x80], channels: 4, resolution: 16)
        #expect(samples == [[-1, 0, 32767, -32768]])
    }

    @Test("'parse reference sample when resolution32 and type is decimal IEEE 754': the bit patterns as sent")
    func reference32() throws {
        let samples = try PMDDeltaCompression.decode([0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0x80], channels: 3, resolution: 32)
        #expect(samples == [[0, -1, Int32.min]])
    }

    @Test("a reference narrower than its bytes is sign-extended from the resolution's top bit, as the SDK does")
    func referenceResolution() throws {
        // 14-bit: 0x2000 has bit 13 set, so it is negative; 0x1FFF is not.
        #expect(try PMDDeltaCompression.decode([0x00, 0x20, 0xFF, 0x1F], channels: 2, resolution: 14) == [[-8192, 8191]])
    }

    @Test("'test_parseDeltaFrameAllSamples_multipleDeltas': ten blocks of 3- and 4-bit deltas, 140 samples")
    func multipleBlocks() throws {
        let samples = try PMDDeltaCompression.decode(PolarSDKVectors.deltaMultipleBlocks, channels: 3, resolution: 16)
        #expect(samples.count == 1 + 9 + 30 + 10 + 20 + 10 + 30 + 10 + 10 + 10)
        #expect(samples[0] == [-55, 18, 17] && samples[1] == [-54, 18, 18])
    }

    @Test("'withResolution32_realVector1': 28- and 32-bit blocks over float bit patterns, 19 samples")
    func floatBlocks() throws {
        let samples = try PMDDeltaCompression.decode(PolarSDKVectors.deltaFloatBlocks, channels: 3, resolution: 32)
        #expect(samples.count == 1 + 6 + 3 + 6 + 3)
        #expect(samples[0] == [0x3F80_0000, 0x4120_0000, 0x41A0_0000])
        let third = Int32(bitPattern: UInt32(0x41A0_0000) &+ UInt32(0xFDEC_CCCD))
        let second: [Int32] = [0x3F80_0000 + 0x01A0_0000, 0x4120_0000 + 0x0080_0000, third]
        #expect(samples[1] == second)
    }

    @Test("'withResolution32': one block of 17 samples of 32-bit deltas; sums wrap at 32 bits")
    func wrappingSums() throws {
        let samples = try PMDDeltaCompression.decode(PolarSDKVectors.delta32BitBlock, channels: 3, resolution: 32)
        #expect(samples.count == 18)
        let reference: [Int32] = [2, Int32(bitPattern: 0xE999_3219), Int32(bitPattern: 0xFFFE_DA00)]
        #expect(samples[0] == reference)
        #expect(samples[1] == [reference[0] &+ Int32(bitPattern: 0xE999_3217), reference[1] &+ 0x1665_A7E7, reference[2] &+ 0x4606_DB38])
    }

    @Test("every SDK vector decodes, encodes and decodes to the same samples")
    func roundTrips() throws {
        let vectors: [([UInt8], Int, Int)] = [
            (PolarSDKVectors.deltaMultipleBlocks, 3, 16), (PolarSDKVectors.deltaFloatBlocks, 3, 32),
            (PolarSDKVectors.delta32BitBlock, 3, 32), (PolarSDKVectors.accCompressedType0Content, 3, 16),
            (PolarSDKVectors.ppgCompressedType13Content, 3, 24),
        ]
        for (bytes, channels, resolution) in vectors {
            let samples = try PMDDeltaCompression.decode(bytes, channels: channels, resolution: resolution)
            let encoded = try PMDDeltaCompression.encode(samples, channels: channels, resolution: resolution)
            #expect(try PMDDeltaCompression.decode(encoded, channels: channels, resolution: resolution) == samples)
        }
        // More than 255 samples take more than one block.
        let ramp = (0..<600).map { [Int32($0), Int32(-$0 * 3)] }
        let encoded = try PMDDeltaCompression.encode(ramp, channels: 2, resolution: 16)
        #expect(try PMDDeltaCompression.decode(encoded, channels: 2, resolution: 16) == ramp)
    }

    @Test("where the SDK's arithmetic breaks: a 1-bit delta of 1 is -1, a width-0 block repeats the last sample")
    func edgeWidths() throws {
        #expect(try PMDDeltaCompression.decode([0x05, 0x01, 0x02, 0x01], channels: 1, resolution: 8) == [[5], [4], [4]])
        #expect(try PMDDeltaCompression.decode([0x05, 0x00, 0x03], channels: 1, resolution: 8) == [[5], [5], [5], [5]])
    }

    @Test("a cut block is truncated; impossible widths, resolutions and channel counts are out of range")
    func refusals() {
        #expect(throws: GATTCodecError.truncated(expected: 3, actual: 2)) { try PMDDeltaCompression.decode([0x05, 0x04], channels: 1, resolution: 8) }
        #expect(throws: GATTCodecError.truncated(expected: 5, actual: 3)) { try PMDDeltaCompression.decode([0x05, 0x08, 0x02], channels: 1, resolution: 8) }
        #expect(throws: GATTCodecError.outOfRange(field: "PMD delta width", value: 33)) { try PMDDeltaCompression.decode([0x05, 33, 1], channels: 1, resolution: 8) }
        #expect(throws: GATTCodecError.outOfRange(field: "PMD delta resolution", value: 33)) { try PMDDeltaCompression.decode([], channels: 1, resolution: 33) }
        #expect(throws: GATTCodecError.outOfRange(field: "PMD delta channels", value: 0)) { try PMDDeltaCompression.decode([], channels: 0, resolution: 8) }
        #expect(throws: GATTCodecError.outOfRange(field: "PMD reference sample", value: 128)) { try PMDDeltaCompression.encode([[128]], channels: 1, resolution: 8) }
    }

    @Test("PmdTimeStampUtilsTest: no rate and no previous frame, or samples before the epoch, are refused")
    func timingRefusals() {
        #expect(throws: PMDSampleTiming.Failure.noRate) {
            try PMDSampleTiming.timestamps(frameTimestamp: 100_000, previousFrameTimestamp: nil, sampleCount: 100, sampleRate: 0)
        }
        #expect(throws: PMDSampleTiming.Failure.beforeEpoch) {
            try PMDSampleTiming.timestamps(frameTimestamp: 100_000, previousFrameTimestamp: nil, sampleCount: 100, sampleRate: 52)
        }
        #expect(throws: PMDSampleTiming.Failure.noSamples) {
            try PMDSampleTiming.timestamps(frameTimestamp: 100_000, previousFrameTimestamp: nil, sampleCount: 0, sampleRate: 52)
        }
        #expect(throws: PMDSampleTiming.Failure.previousFrameNotEarlier) {
            try PMDSampleTiming.timestamps(frameTimestamp: 100, previousFrameTimestamp: 100, sampleCount: 1, sampleRate: 52)
        }
    }

    @Test("PmdTimeStampUtilsTest: from the rate (10 samples at 1 Hz ending at 10 s) and from the previous frame")
    func timing() throws {
        let seconds = (1...10).map { UInt64($0) * 1_000_000_000 }
        #expect(try PMDSampleTiming.timestamps(frameTimestamp: 10_000_000_000, previousFrameTimestamp: nil, sampleCount: 10, sampleRate: 1) == seconds)
        #expect(try PMDSampleTiming.timestamps(frameTimestamp: 1_000_000_000, previousFrameTimestamp: nil, sampleCount: 1, sampleRate: 1) == [1_000_000_000])
        #expect(try PMDSampleTiming.timestamps(frameTimestamp: 11_000_000_000, previousFrameTimestamp: 1_000_000_000, sampleCount: 10, sampleRate: 1)
                == seconds.map { $0 + 1_000_000_000 })
        #expect(try PMDSampleTiming.timestamps(frameTimestamp: 2_000_000_000, previousFrameTimestamp: 100, sampleCount: 3, sampleRate: 1)
                == [666_666_733, 1_333_333_367, 2_000_000_000])
        #expect(try PMDSampleTiming.timestamps(frameTimestamp: 2_000_000_000, previousFrameTimestamp: 1_000_000_000, sampleCount: 1, sampleRate: 1)
                == [2_000_000_000])
        // A previous timestamp of 0 is the SDK's "none".
        #expect(try PMDSampleTiming.timestamps(frameTimestamp: 10_000_000_000, previousFrameTimestamp: 0, sampleCount: 10, sampleRate: 1) == seconds)
    }

    @Test("Polar's epoch is 2000-01-01T00:00:00Z: 0 ns is Unix 946684800000 ms, and back")
    func epoch() {
        #expect(PMDSampleTiming.unixMilliseconds(fromPolarNanoseconds: 0) == 946_684_800_000)
        // 2024-08-01T00:00:00Z, the date of online_measurement.pdf's version 1.0.
        #expect(PMDSampleTiming.unixMilliseconds(fromPolarNanoseconds: 775_785_600_000_000_000) == 1_722_470_400_000)
        #expect(PMDSampleTiming.unixMilliseconds(fromPolarNanoseconds: 1_999_999) == 946_684_800_001)
        #expect(PMDSampleTiming.polarNanoseconds(fromUnixMilliseconds: 1_722_470_400_000) == 775_785_600_000_000_000)
        #expect(PMDSampleTiming.polarNanoseconds(fromUnixMilliseconds: 0) == nil)
    }
}
