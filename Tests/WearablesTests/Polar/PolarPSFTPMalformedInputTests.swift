import Testing
@testable import Wearables

/// Every PSFTP and H10 recording decoder against every prefix of its valid vectors, each vector with one byte
/// changed, and seeded random bytes (`MalformedInputTests.fuzz`): a value that survives encode → decode, or one of
/// the `GATTCodecError`s the decoder documents — never a trap.
@Suite("Polar PSFTP malformed input")
struct PolarPSFTPMalformedInputTests {
    static let frames: [[UInt8]] = PolarPSFTPFrameTests.readResponseFrames + [[0x00, 0xFE, 0xFF], [0x16], [0x00]]
    static let protobufVectors: [[UInt8]] = [
        PolarH10RecordingTests.startParameters, PolarH10RecordingTests.fetchOperation, PolarH10RecordingTests.statusRecording,
        PolarH10RecordingTests.directory, PolarH10RecordingTests.heartRateSamples, PolarH10RecordingTests.rrSamples,
    ]

    /// What the protobuf decoders may throw (`PSFTPProtobuf`): cut bytes, a missing required field, not protobuf.
    private static func protobufError(_ error: GATTCodecError) -> Bool {
        switch error {
        case .truncated: true
        case .outOfRange(let field, _): field.hasPrefix("psftp.")
        default: false
        }
    }

    @Test("frames: anything of 1 byte or more is a frame that re-encodes, or a documented refusal")
    func frames() {
        MalformedInputTests.fuzz(valid: Self.frames, maxLength: 24, allowed: { error in
            switch error {
            case .truncated(_, let actual): actual <= 2
            case .reservedValue(let field, _): field.hasPrefix("PSFTP frame")
            case .outOfRange(let field, let value): field == "PSFTP error frame length" && value > 3
            default: false
            }
        }) { input throws(GATTCodecError) in
            #expect(try PSFTPFrame.decode(input).encode() == input)
        }
    }

    @Test("the assembler: random frame streams give whole messages, codes or typed refusals, and it keeps working after each")
    func assembler() throws {
        var assembler = PSFTPMessageAssembler(maximumLength: 64)
        let decoded = MalformedInputTests.fuzz(valid: Self.frames, maxLength: 24, allowed: { _ in true }) { input throws(GATTCodecError) in
            _ = try assembler.receive(input)
        }
        #expect(decoded > 0)
        // Whatever came before, an interrupt frame ends it (as itself, or refused as out of order), and a fresh
        // one-frame message is then read whole.
        _ = try? assembler.receive([0x00])
        #expect(try assembler.receive([0x02, 0x22]) == .message([0x22]))
    }

    @Test("RFC60 messages and H10 requests: decoded values encode back to themselves")
    func requests() {
        let messages = Self.protobufVectors.prefix(2).map { [0x0E, 0x80] + $0 } + [[0x14, 0x00] + PolarH10RecordingTests.fetchOperation, [0x0F, 0x80]]
        MalformedInputTests.fuzz(valid: messages, maxLength: 32, allowed: { if case .truncated = $0 { true } else { false } }) { input throws(GATTCodecError) in
            #expect(try PSFTPRequestMessage.decode(input).encode() == input)
        }
        MalformedInputTests.fuzz(valid: messages, maxLength: 32, allowed: { _ in true }) { input throws(GATTCodecError) in
            let request = try H10RecordingRequest.decode(PSFTPRequestMessage.decode(input))
            #expect(try H10RecordingRequest.decode(request.message()) == request)
        }
    }

    @Test("status, directory and SAMPLES.BPB: every prefix and mutation decodes to a value that encodes back, or is refused as protobuf")
    func responses() {
        MalformedInputTests.fuzz(valid: Self.protobufVectors, maxLength: 40, allowed: Self.protobufError) { input throws(GATTCodecError) in
            let status = try H10RecordingStatus.decode(input)
            #expect(try H10RecordingStatus.decode(status.encode()) == status)
        }
        MalformedInputTests.fuzz(valid: Self.protobufVectors, maxLength: 40, allowed: Self.protobufError) { input throws(GATTCodecError) in
            let directory = try PSFTPDirectory.decode(input)
            #expect(try PSFTPDirectory.decode(directory.encode()) == directory)
        }
        MalformedInputTests.fuzz(valid: Self.protobufVectors, maxLength: 40, allowed: Self.protobufError) { input throws(GATTCodecError) in
            let samples = try H10ExerciseSamples.decode(input)
            #expect(try H10ExerciseSamples.decode(samples.encode()) == samples)
        }
    }

    @Test("every prefix of a response vector cut inside a field is refused; one cut between fields decodes only with its required fields")
    func truncations() throws {
        for vector in [PolarH10RecordingTests.statusRecording, PolarH10RecordingTests.heartRateSamples, PolarH10RecordingTests.rrSamples] {
            for length in 0..<vector.count {
                let prefix = Array(vector.prefix(length))
                do {
                    if vector == PolarH10RecordingTests.statusRecording {
                        #expect(try H10RecordingStatus.decode(prefix).encode() == prefix)
                    } else {
                        #expect(try H10ExerciseSamples.decode(prefix).encode() == prefix)
                    }
                    #expect(length > 0, "an empty value lacks the required fields")
                } catch {
                    #expect(Self.protobufError(error), "\(prefix): \(error)")
                }
            }
        }
    }
}
