import Testing
@testable import Wearables

/// Every Polar codec against every prefix of its valid vectors, each vector with one byte changed, and seeded
/// random bytes: it returns a value (which survives encode → decode where the type encodes) or throws one of
/// the `GATTCodecError`s it documents — never traps. Deterministic (`MalformedInputTests.Bytes`).
@Suite("Polar malformed input")
struct PolarMalformedInputTests {
    private static func isTruncated(_ error: GATTCodecError) -> Bool { if case .truncated = error { true } else { false } }
    private static func anyError(_: GATTCodecError) -> Bool { true }

    static let header: [UInt8] = [0x00, 0x94, 0x35, 0x77, 0x00, 0x00, 0x00, 0x00]
    static let frames: [[UInt8]] = [
        [0x00] + header + [0x00, 0x02, 0x80, 0xFF, 0x02, 0x80, 0x00],
        [0x00] + header + [0x03, 0x00, 0x12, 0x03, 0x11, 0x10, 0x04, 0x00, 0x02, 0x80, 0xF0, 0x11, 0x10, 0x04, 0xFF],
        [0x02] + header + [0x01] + Array(PolarSDKVectors.accRawType1Content.prefix(24)),
        [0x02] + header + [0x80] + PolarSDKVectors.accCompressedType0Content,
        [0x02, 0x65, 0, 0, 0, 0, 0, 0, 0, 0x81, 0xF1, 0xFF, 0x14, 0x00, 0xF0, 0x03, 0x06, 0x01, 0x7B, 0x0F, 0x08],
        [0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0xFF, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00],
        [0x05] + header + [0x80, 0xEA, 0xFF, 0x08, 0x00, 0x0D, 0x00, 0x03, 0x01, 0xDF, 0x00],
        [0x05] + header + [0x81, 0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x20, 0x41, 0x00, 0x00, 0xA0, 0x41, 0x1C, 0x01,
                           0x00, 0x00, 0xA0, 0x01, 0x00, 0x00, 0x08, 0xCD, 0xCC, 0xEC, 0x0D],
        [0x06] + header + [0x81, 0x37, 0xFF, 0x51, 0xFD, 0x6C, 0xF6, 0x00, 0x00, 0x03, 0x01, 0xF8, 0x02],
        [0x01] + header + [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0xFF, 0xFF, 0x7F, 0x00, 0x00, 0x00],
        [0x01] + header + [0x8D] + Array(PolarSDKVectors.ppgCompressedType13Content.prefix(60)),
    ]

    @Test("data frames: a header shorter than 10 bytes is truncated; any longer value is a frame that re-encodes")
    func dataFrameHeader() {
        MalformedInputTests.fuzz(valid: Self.frames, maxLength: 40, allowed: { if case .truncated(_, let actual) = $0 { actual < 10 } else { false } }) { input throws(GATTCodecError) in
            #expect(try PMDDataFrame.decode(input).encode() == input)
        }
    }

    @Test("frame contents: every decoder returns samples or a typed error; raw samples re-encode to the frame")
    func frameContents() {
        MalformedInputTests.fuzz(valid: Self.frames, maxLength: 60, allowed: Self.anyError) { input throws(GATTCodecError) in
            let frame = try PMDDataFrame.decode(input)
            Self.tryEveryDecoder(frame)
            try Self.decodeOwnType(frame)
        }
    }

    /// Decodes `frame` with its own type's decoder and checks what encodes comes back as the same frame.
    private static func decodeOwnType(_ frame: PMDDataFrame) throws(GATTCodecError) {
        switch frame.measurementType {
        case .ecg:
            let samples = try PMDECGData.decode(frame)
            if frame.frameType == 0, case .microvolts(let values) = samples {
                #expect(try PMDECGData.frame(microvolts: values.map(\.microvolts), timestamp: frame.timestamp).content == frame.content)
            }
        case .acc:
            let samples = try PMDAccelerationData.decode(frame)
            if !frame.isCompressed {
                #expect(try PMDAccelerationData.rawFrame(samples, bytesPerAxis: Int(frame.frameType) + 1, timestamp: frame.timestamp).content == frame.content)
            }
        case .ppi:
            #expect(PMDPPIData.frame(try PMDPPIData.decode(frame), timestamp: frame.timestamp).content == frame.content)
        case .gyroscope: _ = try PMDGyroscopeData.decode(frame)
        case .magnetometer: _ = try PMDMagnetometerData.decode(frame)
        case .ppg: _ = try PMDPPGData.decode(frame)
        default: throw frame.unsupported()
        }
    }

    @Test("raw fixed-size frames: every prefix of the content cut inside a sample is truncated, whole samples decode")
    func rawTruncations() throws {
        let cases: [(PMDDataFrame, Int, (PMDDataFrame) throws -> Int)] = [
            (try PMDDataFrame.decode(Self.frames[0]), 3, { try PMDECGData.decode($0).count }),
            (try PMDDataFrame.decode(Self.frames[1]), 7, { try PMDECGData.decode($0).count }),
            (try PMDDataFrame.decode(Self.frames[2]), 6, { try PMDAccelerationData.decode($0).count }),
            (try PMDDataFrame.decode(Self.frames[5]), 6, { try PMDPPIData.decode($0).count }),
            (try PMDDataFrame.decode(Self.frames[9]), 12, { try PMDPPGData.decode($0).count }),
        ]
        for (frame, sampleLength, decode) in cases {
            for length in 0...frame.content.count {
                var cut = frame
                cut.content = Array(frame.content.prefix(length))
                if length % sampleLength == 0 {
                    #expect(try decode(cut) == length / sampleLength)
                } else {
                    // Cut inside a sample: truncated at the field that is missing, never past the sample.
                    do {
                        let count = try decode(cut)
                        Issue.record("\(cut.content) decoded \(count) samples")
                    } catch {
                        guard case .truncated(let expected, let actual)? = error as? GATTCodecError else { Issue.record("\(error)"); continue }
                        #expect(actual == length && expected > length && expected <= (length / sampleLength + 1) * sampleLength)
                    }
                }
            }
        }
    }

    @Test("compressed frames: every prefix that cuts the reference or a block is truncated")
    func compressedTruncations() throws {
        for vector in [Self.frames[3], Self.frames[4], Self.frames[6], Self.frames[7], Self.frames[8], Self.frames[10]] {
            let frame = try PMDDataFrame.decode(vector)
            let (channels, resolution): (Int, Int) = switch (frame.measurementType, frame.frameType) {
            case (.gyroscope, 1): (3, 32)
            case (.magnetometer, 1): (4, 16)
            case (.ppg, _): (3, 24)
            default: (3, 16)
            }
            // Where each block ends: the only lengths that decode.
            var ends: Set<Int> = [channels * ((resolution + 7) / 8)]
            var offset = ends.first!
            while offset + 1 < frame.content.count {
                offset += 2 + (Int(frame.content[offset]) * Int(frame.content[offset + 1]) * channels + 7) / 8
                ends.insert(offset)
            }
            for length in 0..<frame.content.count {
                let prefix = Array(frame.content.prefix(length))
                if ends.contains(length) {
                    #expect(throws: Never.self) { try PMDDeltaCompression.decode(prefix, channels: channels, resolution: resolution) }
                } else {
                    #expect(throws: GATTCodecError.self) { try PMDDeltaCompression.decode(prefix, channels: channels, resolution: resolution) }
                    do { _ = try PMDDeltaCompression.decode(prefix, channels: channels, resolution: resolution) } catch {
                        #expect(Self.isTruncated(error), "\(vector.prefix(10)) cut at \(length): \(error)")
                    }
                }
            }
        }
    }

    @Test("delta compression: random bytes decode to samples that encode back, or are truncated / out of range")
    func deltaCompression() {
        let valid = [PolarSDKVectors.deltaMultipleBlocks, Array(PolarSDKVectors.delta32BitBlock.prefix(40))]
        for (channels, resolution) in [(3, 16), (1, 8), (4, 24), (3, 32), (2, 12)] {
            MalformedInputTests.fuzz(valid: valid, maxLength: 48, allowed: { error in
                switch error {
                case .truncated: true
                case .outOfRange(let field, _): field == "PMD delta width"
                default: false
                }
            }) { input throws(GATTCodecError) in
                let samples = try PMDDeltaCompression.decode(input, channels: channels, resolution: resolution)
                let again = try PMDDeltaCompression.decode(try PMDDeltaCompression.encode(samples, channels: channels, resolution: resolution),
                                                           channels: channels, resolution: resolution)
                #expect(again == samples)
            }
        }
    }

    @Test("control point: responses, notices, features, settings and requests decode to values that encode back")
    func controlPoint() {
        let responses: [[UInt8]] = [[0xF0, 0x01, 0x02, 0x00, 0x00, 0xFF, 0xFF, 0xFF], [0xF0, 0x01, 0x06, 0x07, 0x00], [0x01, 0x01, 0x02]]
        MalformedInputTests.fuzz(valid: responses, maxLength: 12, allowed: { error in
            switch error {
            case .truncated: true
            case .unknownIdentifier(let field, _): field == "PMD control point response code"
            default: false
            }
        }) { input throws(GATTCodecError) in
            #expect(try PMDControlPointNotice.decode(input).encode() == input)
        }
        MalformedInputTests.fuzz(valid: [[0x0F, 0x05, 0x02], [0x0F, 0xEF, 0x7E]], maxLength: 6, allowed: Self.isTruncated) { input throws(GATTCodecError) in
            #expect(try PMDFeatures.decode(input).encode() == input)
        }
        let settings: [[UInt8]] = [
            [0x00, 0x01, 0x34, 0x00, 0x01, 0x01, 0x10, 0x00, 0x02, 0x04, 0xF5, 0x00, 0xF4, 0x01, 0xE8, 0x03, 0xD0, 0x07, 0x04, 0x01, 0x03],
            [0x03, 0x02, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x01, 0x01, 0x0E, 0x00],
            [0x05, 0x01, 0x00, 0x00, 0x20, 0x40],
        ]
        MalformedInputTests.fuzz(valid: settings, maxLength: 24, allowed: { error in
            switch error {
            case .truncated: true
            case .unknownIdentifier(let field, _): field == "PMD setting type"
            default: false
            }
        }) { input throws(GATTCodecError) in
            let decoded = try PMDSettings.decode(input)
            #expect(try PMDSettings.decode(decoded.encode()) == decoded)
        }
        let requests: [[UInt8]] = [[0x01, 0x02], [0x02, 0x00, 0x00, 0x01, 0x82, 0x00, 0x01, 0x01, 0x0E, 0x00, 0x04, 0x01, 0x01],
                                   [0x02, 0x82, 0x00, 0x01, 0x32, 0x00], [0x03, 0x00], [0x05], [0x09, 0x01, 0x02, 0x04, 0x00, 0x01, 0x34, 0x00],
                                   [0x02, 0x00, 0x06, 0x01, 0x02] + Array(0..<16)]
        MalformedInputTests.fuzz(valid: requests, maxLength: 24, allowed: Self.anyError) { input throws(GATTCodecError) in
            let request = try PMDControlPointRequest.decode(input)
            #expect(try PMDControlPointRequest.decode(request.encode()) == request)
        }
    }

    /// Every frame decoder, fed any frame, with factors a device could get wrong; the measurement-type check
    /// makes all but one refuse it.
    private static func tryEveryDecoder(_ frame: PMDDataFrame) {
        _ = try? PMDECGData.decode(frame)
        _ = try? PMDAccelerationData.decode(frame, factor: 2.44e-4)
        _ = try? PMDGyroscopeData.decode(frame, factor: .nan)
        _ = try? PMDMagnetometerData.decode(frame, factor: 1.1)
        _ = try? PMDPPIData.decode(frame)
        _ = try? PMDPPGData.decode(frame, factor: .infinity)
    }
}
