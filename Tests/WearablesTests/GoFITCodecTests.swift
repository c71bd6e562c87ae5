import Testing

@testable import Wearables

/// The GoFIT vendor service's link layer, frames and messages against docs/protocols/gofit.md. Byte vectors are
/// copied by hand from the page's "Example frames" table (whose CRCs were checked with an independent CRC
/// implementation), not produced by the encoders.
@Suite("GoFIT vendor service: segments, frames, messages")
struct GoFITCodecTests {
    // MARK: Example frames (docs/protocols/gofit.md)

    static let pairStart: [UInt8] = [0x01, 0x05, 0x00, 0x00, 0x84, 0x19]
    static let pairStartAnswer: [UInt8] = [0x81, 0x05, 0x05, 0x00, 0x0A, 0xC0, 0x68, 0x02, 0x6B, 0x95, 0x01]
    static let pairConfirm: [UInt8] = [0x02, 0x06, 0x08, 0x00, 0x34, 0x38, 0x32, 0x31, 0xC0, 0x68, 0x02, 0x6B, 0x8F, 0x82]
    static let pairConfirmWrongCode: [UInt8] = [0x82, 0x06, 0x01, 0x00, 0x0E, 0x38, 0x86]
    static let findBand: [UInt8] = [0x30, 0x07, 0x01, 0x00, 0x03, 0x9C, 0x4B]
    static let findBandAnswer: [UInt8] = [0xB0, 0x07, 0x01, 0x00, 0x0A, 0x65, 0xF8]
    static let settingsWrite: [UInt8] = [0x11, 0x08, 0x09, 0x00, 0x02, 0x04, 0x40, 0x1F, 0x00, 0x00, 0x04, 0x01, 0x18, 0x1D, 0xAD]
    static let findPhone: [UInt8] = [0xE0, 0x00, 0x00, 0x00, 0x2A, 0x00]

    @Test("PAIR_START with sequence 5 is 01 05 00 00 84 19")
    func examplePairStart() throws {
        #expect(GoFITRequest.pairStart.frame(sequence: 5).encoded() == Self.pairStart)
        let frame = try VendorFrame(decoding: Self.pairStart)
        #expect(frame == VendorFrame(opcode: 0x01, sequence: 5))
        #expect(try GoFITRequest(frame: frame) == .pairStart)
    }

    @Test("its answer, pairing time 1795320000, is 81 05 05 00 0A C0 68 02 6B 95 01")
    func examplePairStartAnswer() throws {
        let response = GoFITResponse(opcode: .pairStart, sequence: 5, status: .ok,
                                     data: GoFITPairingStarted(pairingTime: 1_795_320_000).encoded())
        #expect(response.frame().encoded() == Self.pairStartAnswer)
        let decoded = try GoFITResponse(frame: VendorFrame(decoding: Self.pairStartAnswer))
        #expect(decoded == response)
        #expect(decoded.status == .ok && decoded.status.commandError == nil)
        #expect(try GoFITPairingStarted(decoding: decoded.data).pairingTime == 1_795_320_000)
    }

    @Test("PAIR_CONFIRM \"4821\" with that pairing time is 02 06 08 00 34 38 32 31 C0 68 02 6B 8F 82")
    func examplePairConfirm() throws {
        let request = GoFITRequest.pairConfirm(code: "4821", pairingTime: 1_795_320_000)
        #expect(request.frame(sequence: 6).encoded() == Self.pairConfirm)
        #expect(try GoFITRequest(frame: VendorFrame(decoding: Self.pairConfirm)) == request)
    }

    @Test("its answer for a wrong code is 82 06 01 00 0E 38 86: DEVICE_PAIRING_FAIL, PAIRING_FAILED with vendor_code 14")
    func examplePairConfirmWrongCode() throws {
        let response = GoFITResponse(opcode: .pairConfirm, sequence: 6, status: .pairingFailed)
        #expect(response.frame().encoded() == Self.pairConfirmWrongCode)
        let decoded = try GoFITResponse(frame: VendorFrame(decoding: Self.pairConfirmWrongCode))
        #expect(decoded == response)
        #expect(decoded.status.sdkName == "DEVICE_PAIRING_FAIL")
        #expect(decoded.status.commandError?.code == .pairingFailed)
        #expect(decoded.status.commandError?.vendorCode == 14)
    }

    @Test("FIND_BAND with 3 vibrations is 30 07 01 00 03 9C 4B, its answer B0 07 01 00 0A 65 F8")
    func exampleFindBand() throws {
        #expect(GoFITRequest.findBand(vibrations: 3).frame(sequence: 7).encoded() == Self.findBand)
        #expect(try GoFITRequest(frame: VendorFrame(decoding: Self.findBand)) == .findBand(vibrations: 3))
        let answer = GoFITResponse(opcode: .findBand, sequence: 7, status: .ok)
        #expect(answer.frame().encoded() == Self.findBandAnswer)
        #expect(try GoFITResponse(frame: VendorFrame(decoding: Self.findBandAnswer)) == answer)
    }

    @Test("SETTINGS_WRITE of step goal 8000 and a 24-hour clock is 11 08 09 00 02 04 40 1F 00 00 04 01 18 1D AD")
    func exampleSettingsWrite() throws {
        let request = GoFITRequest.settingsWrite([
            GoFITSettingTLV(id: 2, value: [0x40, 0x1F, 0x00, 0x00]), GoFITSettingTLV(id: 4, value: [0x18]),
        ])
        #expect(request.frame(sequence: 8).encoded() == Self.settingsWrite)
        #expect(try GoFITRequest(frame: VendorFrame(decoding: Self.settingsWrite)) == request)
    }

    @Test("the event FIND_PHONE with band sequence 0 is E0 00 00 00 2A 00")
    func exampleFindPhone() throws {
        #expect(GoFITEvent.findPhone.frame(sequence: 0).encoded() == Self.findPhone)
        #expect(try GoFITEvent(frame: VendorFrame(decoding: Self.findPhone)) == .findPhone)
    }

    @Test("the PAIR_START frame in one segment is 80 01 05 00 00 84 19")
    func exampleSegment() {
        #expect(FrameSegmenter.segments(of: Self.pairStart) == [[0x80, 0x01, 0x05, 0x00, 0x00, 0x84, 0x19]])
        var reassembler = FrameReassembler()
        #expect(reassembler.append([0x80, 0x01, 0x05, 0x00, 0x00, 0x84, 0x19]) == Self.pairStart)
    }

    @Test("the frame in progress is named by its first segment's opcode and sequence, and by nothing between frames")
    func frameInProgress() {
        var reassembler = FrameReassembler()
        #expect(reassembler.frameInProgress == nil)
        let segments = FrameSegmenter.segments(of: (0..<50).map { UInt8($0) }, segmentSize: 20)
        _ = reassembler.append(segments[0])
        #expect(reassembler.frameInProgress.map { [$0.opcode, $0.sequence] } == [0, 1])
        _ = reassembler.append(segments[1])
        #expect(reassembler.frameInProgress.map { [$0.opcode, $0.sequence] } == [0, 1])
        #expect(reassembler.append(segments[2]) != nil)
        #expect(reassembler.frameInProgress == nil)
        // A lost segment: nothing is in progress until the next frame starts.
        _ = reassembler.append(segments[0])
        _ = reassembler.append(segments[2])
        #expect(reassembler.frameInProgress == nil)
    }

    // MARK: CRC

    @Test("CRC-16/CCITT-FALSE: \"123456789\" gives 0x29B1, nothing gives the initial 0xFFFF")
    func crcCheckValue() {
        #expect(FrameCRC16.checksum(Array("123456789".utf8)) == 0x29B1)
        #expect(FrameCRC16.checksum([UInt8]()) == 0xFFFF)
        #expect(FrameCRC16.checksum([0x30, 0x07, 0x01, 0x00, 0x03]) == 0x4B9C)
    }

    // MARK: Segments

    @Test("a 50-byte frame at 20-byte segments is 19 + 19 + 12 bytes under headers 00, 01 and 82, and reassembles")
    func segmentsOfFiftyBytes() {
        let frame = (0..<50).map { UInt8($0) }
        let segments = FrameSegmenter.segments(of: frame, segmentSize: 20)
        #expect(segments.map(\.count) == [20, 20, 13])
        #expect(segments.map { $0[0] } == [0x00, 0x01, 0x82])
        #expect(Array(segments[0].dropFirst()) == Array(0..<19))
        #expect(Array(segments[1].dropFirst()) == Array(19..<38))
        #expect(Array(segments[2].dropFirst()) == Array(38..<50))

        var reassembler = FrameReassembler()
        #expect(reassembler.append(segments[0]) == nil)
        #expect(reassembler.append(segments[1]) == nil)
        #expect(reassembler.append(segments[2]) == frame)
        #expect(reassembler.droppedFrames == 0)
        // The next frame starts afresh.
        #expect(reassembler.append(FrameSegmenter.segments(of: Self.pairStart)[0]) == Self.pairStart)
    }

    @Test("the default segment is 20 bytes; a frame filling its last segment exactly gets no empty extra one")
    func segmentBoundaries() {
        #expect(FrameSegmenter.defaultSegmentSize == 20)
        let frame = [UInt8](repeating: 0xAA, count: 38)
        #expect(FrameSegmenter.segments(of: frame).map(\.count) == [20, 20])
        #expect(FrameSegmenter.segments(of: frame).map { $0[0] } == [0x00, 0x81])
        #expect(FrameSegmenter.segments(of: frame, segmentSize: 244) == [[0x80] + frame])
        #expect(FrameSegmenter.segments(of: []) == [[0x80]])
    }

    @Test("indices count modulo 128: a 200-segment frame runs 0…127, 0…71 and reassembles across the wrap")
    func segmentIndexWraps() {
        let frame = (0..<200).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let segments = FrameSegmenter.segments(of: frame, segmentSize: 2)
        #expect(segments.count == 200)
        #expect(segments[127][0] == 0x7F)
        #expect(segments[128][0] == 0x00)
        #expect(segments[199][0] == 0x80 | 71)
        var reassembler = FrameReassembler()
        let outputs = segments.map { reassembler.append($0) }
        #expect(outputs.dropLast().allSatisfy { $0 == nil })
        #expect(outputs.last == frame)
        #expect(reassembler.droppedFrames == 0)
    }

    @Test("index 0 while a frame is unfinished drops that frame (counted) and starts the new one")
    func indexZeroRestarts() {
        var reassembler = FrameReassembler()
        #expect(reassembler.append([0x00, 0xDE, 0xAD]) == nil)
        #expect(reassembler.append([0x01, 0xBE, 0xEF]) == nil)
        #expect(reassembler.append([0x00, 0x01, 0x02]) == nil)
        #expect(reassembler.droppedFrames == 1)
        #expect(reassembler.append([0x81, 0x03]) == [0x01, 0x02, 0x03])
        #expect(reassembler.droppedFrames == 1)
    }

    @Test("a wrong index drops the frame in progress, and segments are ignored until the next index 0")
    func wrongIndexDrops() {
        var reassembler = FrameReassembler()
        #expect(reassembler.append([0x00, 0x01]) == nil)
        #expect(reassembler.append([0x02, 0x02]) == nil, "index 1 was lost")
        #expect(reassembler.droppedFrames == 1)
        #expect(reassembler.append([0x01, 0x03]) == nil, "ignored, though it follows the lost index")
        #expect(reassembler.append([0x83, 0x04]) == nil, "a final segment is ignored too")
        #expect(reassembler.droppedFrames == 1, "the ignored segments belong to the frame already counted")
        #expect(reassembler.append([0x80, 0x05, 0x06]) == [0x05, 0x06])
    }

    @Test("a repeated index is a wrong index")
    func repeatedIndexDrops() {
        var reassembler = FrameReassembler()
        #expect(reassembler.append([0x00, 0x01]) == nil)
        #expect(reassembler.append([0x01, 0x02]) == nil)
        #expect(reassembler.append([0x81, 0x02]) == nil)
        #expect(reassembler.droppedFrames == 1)
    }

    @Test("a segment other than index 0 with no frame in progress is dropped (counted once) until the next index 0")
    func continuationWithoutStart() {
        var reassembler = FrameReassembler()
        #expect(reassembler.append([0x01, 0x01]) == nil)
        #expect(reassembler.append([0x82, 0x02]) == nil)
        #expect(reassembler.droppedFrames == 1)
        #expect(reassembler.append([0x80, 0x09]) == [0x09])
    }

    @Test("an empty ATT value is ignored and counted; the frame in progress goes on")
    func emptySegment() {
        var reassembler = FrameReassembler()
        #expect(reassembler.append([]) == nil)
        #expect(reassembler.droppedFrames == 1)
        #expect(reassembler.append([0x00, 0x01]) == nil)
        #expect(reassembler.append([]) == nil)
        #expect(reassembler.droppedFrames == 2)
        #expect(reassembler.append([0x81, 0x02]) == [0x01, 0x02])
    }

    @Test("a header-only final segment ends the frame with what came before it")
    func headerOnlyFinalSegment() {
        var reassembler = FrameReassembler()
        #expect(reassembler.append([0x00, 0x01, 0x02]) == nil)
        #expect(reassembler.append([0x81]) == [0x01, 0x02])
    }

    @Test("a frame growing past 65,541 bytes is dropped and counted")
    func oversizedFrame() {
        #expect(FrameReassembler.maximumFrameLength == 65_541)
        var reassembler = FrameReassembler()
        let chunk = [UInt8](repeating: 0x55, count: 511)
        var index: UInt8 = 0
        var results: [[UInt8]?] = []
        for _ in 0..<129 { // 129 × 511 = 65,919 bytes
            results.append(reassembler.append([index] + chunk))
            index = (index + 1) & 0x7F
        }
        #expect(results.allSatisfy { $0 == nil })
        #expect(reassembler.droppedFrames == 1)
        #expect(reassembler.append([index | 0x80, 0x01]) == nil, "the rest of the frame is ignored")
        #expect(reassembler.append([0x80, 0x07]) == [0x07])

        var largest = FrameReassembler()
        let maximal = FrameSegmenter.segments(of: [UInt8](repeating: 1, count: 65_541), segmentSize: 512)
        #expect(maximal.map { largest.append($0) }.last == [UInt8](repeating: 1, count: 65_541))
        #expect(largest.droppedFrames == 0)
    }

    // MARK: Frames

    @Test("a frame is opcode, sequence, payload length u16 LE, payload, CRC u16 LE; it round-trips at any length")
    func frameRoundTrip() throws {
        for length in [0, 1, 19, 300, 65_535] {
            let frame = VendorFrame(opcode: 0xA1, sequence: 0xFE, payload: (0..<length).map { UInt8(truncatingIfNeeded: $0) })
            let bytes = frame.encoded()
            #expect(bytes.count == length + 6)
            #expect(bytes[2] == UInt8(length & 0xFF) && bytes[3] == UInt8(length >> 8))
            #expect(try VendorFrame(decoding: bytes) == frame)
        }
    }

    @Test("fewer than 6 bytes is truncated; a length field that disagrees with the bytes is a length mismatch")
    func frameTruncatedAndLengthMismatch() {
        for length in 0..<6 {
            #expect(throws: VendorFrameError.truncated(expected: 6, actual: length)) {
                try VendorFrame(decoding: Array(Self.findBand.prefix(length)))
            }
        }
        #expect(throws: VendorFrameError.lengthMismatch(declared: 1, actual: 0)) {
            try VendorFrame(decoding: [0x30, 0x07, 0x01, 0x00, 0x9C, 0x4B])
        }
        #expect(throws: VendorFrameError.lengthMismatch(declared: 1, actual: 2)) {
            try VendorFrame(decoding: [0x30, 0x07, 0x01, 0x00, 0x03, 0x03, 0x9C, 0x4B])
        }
        #expect(throws: VendorFrameError.lengthMismatch(declared: 0x0100, actual: 1)) {
            try VendorFrame(decoding: [0x30, 0x07, 0x00, 0x01, 0x03, 0x9C, 0x4B])
        }
    }

    @Test("a frame whose CRC does not match is malformed: 30 07 01 00 04 with the CRC of 03 should carry 7B 3B")
    func frameChecksumMismatch() {
        #expect(throws: VendorFrameError.checksumMismatch(expected: 0x3B7B, actual: 0x4B9C)) {
            try VendorFrame(decoding: [0x30, 0x07, 0x01, 0x00, 0x04, 0x9C, 0x4B])
        }
        #expect(throws: VendorFrameError.checksumMismatch(expected: 0x4B9C, actual: 0x9C4B)) {
            try VendorFrame(decoding: [0x30, 0x07, 0x01, 0x00, 0x03, 0x4B, 0x9C])
        }
        // Every single-bit error anywhere in the frame is caught.
        for index in Self.settingsWrite.indices {
            for bit in 0..<8 {
                var corrupted = Self.settingsWrite
                corrupted[index] ^= UInt8(1) << bit
                #expect(throws: VendorFrameError.self) { try VendorFrame(decoding: corrupted) }
            }
        }
    }

    // MARK: Opcodes and statuses

    @Test("opcodes as the table numbers them; a response's is the request's with bit 7 set")
    func opcodes() {
        #expect(GoFITOpcode.allCases.map(\.rawValue)
            == [0x01, 0x02, 0x03, 0x04, 0x06, 0x10, 0x11, 0x20, 0x21, 0x22, 0x23, 0x30, 0x40, 0x41])
        for opcode in GoFITOpcode.allCases {
            #expect(opcode.responseOpcode == opcode.rawValue + 0x80)
            #expect(GoFITOpcode(responseOpcode: opcode.responseOpcode) == opcode)
            #expect(GoFITOpcode(responseOpcode: opcode.rawValue) == nil)
        }
        #expect(GoFITOpcode(responseOpcode: GoFITEventOpcode.findPhone.rawValue) == nil)
        #expect(GoFITEventOpcode.findPhone.rawValue == 0xE0)
        #expect(GoFITOpcode.allCases.filter(\.isAllowedBeforeAuthentication)
            == [.pairStart, .pairConfirm, .authChallenge, .authProof, .identity])
    }

    @Test(
        "each status of the table has its SDK name and MQTT error, with the status as vendor_code",
        arguments: [
            (GoFITStatus.pairingFailed, 14, "DEVICE_PAIRING_FAIL", CommandError.Code.pairingFailed),
            (.pairingCodeNotFound, 15, "DEVICE_PAIRING_CODE_NOT_FOUND", .pairingFailed),
            (.settingFormatError, 18, "BLE_SETTING_FORMAT_ERROR", .invalidValue),
            (.notImplemented, 21, "MESSAGE_TYPE_NON_EXISTENT_OR_NOT_IMPLEMENTED", .notSupported),
            (.pairingNeeded, 22, "PAIRING_NEEDED", .pairingRequired),
            (.authorizationNeeded, 23, "AUTHORIZATION_NEEDED", .pairingRequired),
            (.otherDeviceSyncing, 33, "OTHER_DEVICE_SYNCING", .busy),
        ] as [(GoFITStatus, UInt8, String, CommandError.Code)]
    )
    func statusTable(status: GoFITStatus, raw: UInt8, sdkName: String, code: CommandError.Code) throws {
        #expect(status.rawValue == raw)
        #expect(status.sdkName == sdkName)
        let error = try #require(status.commandError)
        #expect(error.code == code)
        #expect(error.vendorCode == Int(raw))
        #expect(!error.message.isEmpty)
    }

    @Test("status 10 is BLE_CMD_OK and no error")
    func statusOK() {
        #expect(GoFITStatus.ok.rawValue == 10)
        #expect(GoFITStatus.ok.sdkName == "BLE_CMD_OK")
        #expect(GoFITStatus.ok.commandError == nil)
    }

    @Test("a response with a status the table does not list decodes, and is INTERNAL with that status as vendor_code")
    func unknownStatus() throws {
        let bytes = VendorFrame(opcode: 0xA3, sequence: 9, payload: [99, 0x01]).encoded()
        let response = try GoFITResponse(frame: VendorFrame(decoding: bytes))
        #expect(response == GoFITResponse(opcode: .historyStatus, sequence: 9, status: GoFITStatus(rawValue: 99), data: [0x01]))
        #expect(response.status.sdkName == "status 99")
        #expect(response.status.commandError?.code == .internalError)
        #expect(response.status.commandError?.vendorCode == 99)
        #expect(response.frame().encoded() == bytes)
    }

    @Test("a response frame needs bit 7 and a known request opcode, and at least its status byte")
    func malformedResponses() {
        #expect(throws: GATTCodecError.unknownIdentifier(field: "opcode", value: 0x30)) {
            try GoFITResponse(frame: VendorFrame(opcode: 0x30, sequence: 1, payload: [10]))
        }
        #expect(throws: GATTCodecError.unknownIdentifier(field: "opcode", value: 0x85)) {
            try GoFITResponse(frame: VendorFrame(opcode: 0x85, sequence: 1, payload: [10]))
        }
        #expect(throws: GATTCodecError.unknownIdentifier(field: "opcode", value: 0xE0)) {
            try GoFITResponse(frame: VendorFrame(opcode: 0xE0, sequence: 0))
        }
        #expect(throws: GATTCodecError.truncated(expected: 1, actual: 0)) {
            try GoFITResponse(frame: VendorFrame(opcode: 0xB0, sequence: 1))
        }
    }

    @Test("an event other than FIND_PHONE is unknownIdentifier; FIND_PHONE carries no payload")
    func malformedEvents() {
        #expect(throws: GATTCodecError.unknownIdentifier(field: "event opcode", value: 0xE1)) {
            try GoFITEvent(frame: VendorFrame(opcode: 0xE1, sequence: 0))
        }
        #expect(throws: GATTCodecError.unknownIdentifier(field: "event opcode", value: 0xB0)) {
            try GoFITEvent(frame: VendorFrame(opcode: 0xB0, sequence: 0, payload: [10]))
        }
        #expect(throws: GATTCodecError.truncated(expected: 0, actual: 1)) {
            try GoFITEvent(frame: VendorFrame(opcode: 0xE0, sequence: 0, payload: [1]))
        }
    }

    // MARK: Requests

    /// One request of every opcode with its payload written out by hand.
    static let requestPayloads: [(GoFITRequest, [UInt8])] = [
        (.pairStart, []),
        (.pairConfirm(code: "0917", pairingTime: 0x0A0B_0C0D), [0x30, 0x39, 0x31, 0x37, 0x0D, 0x0C, 0x0B, 0x0A]),
        (.authChallenge, []),
        (.authProof(Array(0xF0...0xFF)), Array(0xF0...0xFF)),
        (.identity, []),
        (.settingsRead(ids: [1, 9, 16]), [0x01, 0x09, 0x10]),
        (.settingsWrite([GoFITSettingTLV(id: 3, value: [0x01]), GoFITSettingTLV(id: 6, value: [0x00])]),
         [0x03, 0x01, 0x01, 0x06, 0x01, 0x00]),
        (.historyOpen(kind: .heartRate, since: 0x0102_0304, until: 0xA0B0_C0D0),
         [0x03, 0x04, 0x03, 0x02, 0x01, 0xD0, 0xC0, 0xB0, 0xA0]),
        (.historyPage(kind: .activity, page: 0x0102), [0x05, 0x02, 0x01]),
        (.historyAck(kind: .steps, page: 7), [0x01, 0x07, 0x00]),
        (.historyStatus, []),
        (.findBand(vibrations: 10), [0x0A]),
        (.clearData, []),
        (.initialise, []),
    ]

    @Test("every request encodes to its payload under its opcode and decodes back")
    func requestRoundTrips() throws {
        #expect(Set(Self.requestPayloads.map(\.0.opcode)) == Set(GoFITOpcode.allCases), "every opcode is covered")
        for (request, payload) in Self.requestPayloads {
            #expect(request.payload() == payload, "\(request)")
            let frame = request.frame(sequence: 0x42)
            #expect(frame == VendorFrame(opcode: request.opcode.rawValue, sequence: 0x42, payload: payload))
            #expect(try GoFITRequest(frame: VendorFrame(decoding: frame.encoded())) == request)
        }
        #expect(try GoFITRequest(frame: VendorFrame(opcode: 0x10, sequence: 0)) == .settingsRead(ids: []), "none = all")
        #expect(try GoFITRequest(frame: VendorFrame(opcode: 0x11, sequence: 0)) == .settingsWrite([]))
    }

    @Test("every request payload one byte short, or one byte long, is truncated with the length the opcode takes")
    func requestWrongLengths() {
        for (request, payload) in Self.requestPayloads {
            if case .settingsRead = request { continue } // any length is a list of ids
            if case .settingsWrite = request { continue } // checked below
            let opcode = request.opcode.rawValue
            if !payload.isEmpty {
                let short = VendorFrame(opcode: opcode, sequence: 0, payload: Array(payload.dropLast()))
                #expect(throws: GATTCodecError.truncated(expected: payload.count, actual: payload.count - 1), "\(request)") {
                    try GoFITRequest(frame: short)
                }
            }
            let long = VendorFrame(opcode: opcode, sequence: 0, payload: payload + [0x00])
            #expect(throws: GATTCodecError.truncated(expected: payload.count, actual: payload.count + 1), "\(request)") {
                try GoFITRequest(frame: long)
            }
        }
        #expect(throws: GATTCodecError.truncated(expected: 6, actual: 4), "a 4-byte value with 2 bytes of it") {
            try GoFITRequest(frame: VendorFrame(opcode: 0x11, sequence: 0, payload: [0x02, 0x04, 0x40, 0x1F]))
        }
    }

    @Test("an opcode the table does not list (or a response's) is unknownIdentifier(opcode)")
    func unknownRequestOpcode() {
        for opcode: UInt8 in [0x00, 0x05, 0x12, 0x31, 0x7F, 0x81, 0xE0] {
            #expect(throws: GATTCodecError.unknownIdentifier(field: "opcode", value: Int(opcode))) {
                try GoFITRequest(frame: VendorFrame(opcode: opcode, sequence: 0))
            }
        }
    }

    @Test("a pairing code that is not 4 ASCII digits is outOfRange(code) naming the first bad byte")
    func pairingCodeDigits() {
        #expect(throws: GATTCodecError.outOfRange(field: "code", value: 0x61)) {
            try GoFITRequest(frame: VendorFrame(opcode: 0x02, sequence: 0, payload: [0x34, 0x61, 0x32, 0x31, 0, 0, 0, 0]))
        }
        #expect(throws: GATTCodecError.outOfRange(field: "code", value: 0x2F)) {
            try GoFITRequest(frame: VendorFrame(opcode: 0x02, sequence: 0, payload: [0x2F, 0x30, 0x30, 0x30, 0, 0, 0, 0]))
        }
        #expect(throws: GATTCodecError.outOfRange(field: "code", value: 0x3A)) {
            try GoFITRequest(frame: VendorFrame(opcode: 0x02, sequence: 0, payload: [0x30, 0x30, 0x30, 0x3A, 0, 0, 0, 0]))
        }
        #expect(GoFITRequest.isPairingCode("0000"))
        #expect(GoFITRequest.isPairingCode("4821"))
        for code in ["482", "48210", "48a1", "４８２１", "", " 482"] {
            #expect(!GoFITRequest.isPairingCode(code), "\(code)")
        }
    }

    @Test("a history kind outside 1–5 is unknownIdentifier(kind)")
    func unknownHistoryKind() {
        for (opcode, payload) in [(UInt8(0x20), [UInt8](repeating: 0, count: 8)), (0x21, [0, 0]), (0x22, [0, 0])] {
            for kind: UInt8 in [0, 6, 0xFF] {
                #expect(throws: GATTCodecError.unknownIdentifier(field: "kind", value: Int(kind))) {
                    try GoFITRequest(frame: VendorFrame(opcode: opcode, sequence: 0, payload: [kind] + payload))
                }
            }
        }
    }

    // MARK: Response data

    @Test("PAIR_START data is the pairing time u32 LE, exactly")
    func pairingStarted() throws {
        #expect(GoFITPairingStarted(pairingTime: 0x0102_0304).encoded() == [0x04, 0x03, 0x02, 0x01])
        #expect(throws: GATTCodecError.truncated(expected: 4, actual: 3)) { try GoFITPairingStarted(decoding: [1, 2, 3]) }
        #expect(throws: GATTCodecError.truncated(expected: 4, actual: 5)) { try GoFITPairingStarted(decoding: [1, 2, 3, 4, 5]) }
    }

    @Test("PAIR_CONFIRM data is a 16-byte key and AUTH_CHALLENGE data a 16-byte nonce, exactly")
    func keyAndNonce() throws {
        let sixteen = Array(UInt8(0x20)..<0x30)
        #expect(try GoFITPairingKey(decoding: sixteen) == GoFITPairingKey(key: sixteen))
        #expect(GoFITPairingKey(key: sixteen).encoded() == sixteen)
        #expect(try GoFITChallenge(decoding: sixteen) == GoFITChallenge(nonce: sixteen))
        #expect(GoFITChallenge(nonce: sixteen).encoded() == sixteen)
        #expect(throws: GATTCodecError.truncated(expected: 16, actual: 15)) { try GoFITPairingKey(decoding: Array(sixteen.prefix(15))) }
        #expect(throws: GATTCodecError.truncated(expected: 16, actual: 17)) { try GoFITPairingKey(decoding: sixteen + [0]) }
        #expect(throws: GATTCodecError.truncated(expected: 16, actual: 0)) { try GoFITChallenge(decoding: []) }
        #expect(throws: GATTCodecError.truncated(expected: 16, actual: 17)) { try GoFITChallenge(decoding: sixteen + [0]) }
    }

    @Test("IDENTITY data is product id u16 LE then the MAC most significant byte first, printed AA:BB:…")
    func identity() throws {
        let bytes: [UInt8] = [0x34, 0x12, 0xC0, 0xFF, 0xEE, 0x01, 0x02, 0x0A]
        let identity = try GoFITIdentity(decoding: bytes)
        #expect(identity.productID == 0x1234)
        #expect(identity.mac == [0xC0, 0xFF, 0xEE, 0x01, 0x02, 0x0A])
        #expect(identity.macString == "C0:FF:EE:01:02:0A")
        #expect(identity.encoded() == bytes)
        #expect(GoFITIdentity(productID: 0x1234, macString: "c0:ff:ee:01:02:0a") == identity)
        for bad in ["C0:FF:EE:01:02", "C0:FF:EE:01:02:0A:0B", "C0:FF:EE:01:02:G0", "C0FFEE01020A", "C0:FF:EE:01:02:A", ""] {
            #expect(GoFITIdentity(productID: 1, macString: bad) == nil, "\(bad)")
        }
        #expect(throws: GATTCodecError.truncated(expected: 8, actual: 7)) { try GoFITIdentity(decoding: Array(bytes.dropLast())) }
        #expect(throws: GATTCodecError.truncated(expected: 8, actual: 9)) { try GoFITIdentity(decoding: bytes + [0]) }
    }

    @Test("HISTORY_OPEN data is kind u8, record count u32, page count u16")
    func historyOpened() throws {
        let bytes: [UInt8] = [0x02, 0x82, 0x00, 0x00, 0x00, 0x03, 0x00]
        let opened = GoFITHistoryOpened(kind: .sleep, recordCount: 130, pageCount: 3)
        #expect(opened.encoded() == bytes)
        #expect(try GoFITHistoryOpened(decoding: bytes) == opened)
        #expect(throws: GATTCodecError.unknownIdentifier(field: "kind", value: 9)) {
            try GoFITHistoryOpened(decoding: [0x09, 0x82, 0x00, 0x00, 0x00, 0x03, 0x00])
        }
        #expect(throws: GATTCodecError.truncated(expected: 7, actual: 6)) { try GoFITHistoryOpened(decoding: Array(bytes.dropLast())) }
    }

    @Test("HISTORY_STATUS data is 17 bytes per kind: kind, stored, unacknowledged, oldest, newest")
    func historyStatus() throws {
        let bytes: [UInt8] = [
            0x01, 0xB0, 0x04, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x30, 0xCB, 0x30, 0x5B, 0x7F, 0xF2, 0x31, 0x5B,
            0x05, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xE0, 0x6B, 0x30, 0x5B, 0x70, 0xCB, 0x31, 0x5B,
        ]
        let status = GoFITHistoryStatus(entries: [
            .init(kind: .steps, stored: 1200, unacknowledged: 64, oldest: 1_529_924_400, newest: 1_529_999_999),
            .init(kind: .activity, stored: 2, unacknowledged: 0, oldest: 1_529_900_000, newest: 1_529_990_000),
        ])
        #expect(try GoFITHistoryStatus(decoding: bytes) == status)
        #expect(status.encoded() == bytes)
        #expect(status.entry(for: .activity)?.stored == 2)
        #expect(status.entry(for: .sleep) == nil)
        #expect(try GoFITHistoryStatus(decoding: []).entries.isEmpty)
        #expect(throws: GATTCodecError.truncated(expected: 34, actual: 33)) { try GoFITHistoryStatus(decoding: Array(bytes.dropLast())) }
        var unknown = bytes
        unknown[17] = 0x06
        #expect(throws: GATTCodecError.unknownIdentifier(field: "kind", value: 6)) { try GoFITHistoryStatus(decoding: unknown) }
    }

    // MARK: Authentication

    @Test("the proof is the first 16 bytes of HMAC-SHA256(key, nonce ‖ \"GoFIT-auth\"), here for key 00…0F, nonce 10…1F")
    func authenticationProof() {
        let key = Array(UInt8(0x00)...0x0F)
        let nonce = Array(UInt8(0x10)...0x1F)
        // python3: hmac.new(bytes(range(16)), bytes(range(16, 32)) + b"GoFIT-auth", hashlib.sha256).digest()[:16]
        let expected: [UInt8] = [
            0x47, 0x45, 0x79, 0x50, 0x42, 0xF3, 0xB2, 0x2B, 0x5F, 0x5B, 0x32, 0xF7, 0xF7, 0x2E, 0xD0, 0xAF,
        ]
        let proof = GoFITAuthentication.proof(key: key, nonce: nonce)
        #expect(proof == expected)
        #expect(proof.count == 16)
        #expect(GoFITAuthentication.proof(key: key, nonce: nonce) == proof, "deterministic")
        var otherNonce = nonce
        otherNonce[15] ^= 0x01
        #expect(GoFITAuthentication.proof(key: key, nonce: otherNonce) != proof)
        var otherKey = key
        otherKey[0] ^= 0x01
        #expect(GoFITAuthentication.proof(key: otherKey, nonce: nonce) != proof)
        #expect(GoFITRequest.authProof(proof).payload() == expected)
    }
}
