import Testing
@testable import Wearables

/// PSFTP's RFC76 frames and RFC60 message headers. Vectors from `polarofficial/polar-ble-sdk`: Android
/// `…/src/test/java/com/polar/androidcommunications/api/ble/model/gatt/client/psftp/BlePsFtpUtilsTest.kt` and
/// `BlePsFtpClientTest.kt`, iOS `sources/iOS/ios-communications/Tests/iOSCommunicationsTests/BlePsFtpUtilityTest.swift`
/// (file and test named at each).
@Suite("Polar PSFTP frames")
struct PolarPSFTPFrameTests {
    /// BlePsFtpClientTest.kt, "test psftp client read response": a 13-frame response at an MTU of 20.
    static let readResponseFrames: [[UInt8]] = [
        [0x06, 0x0A, 0x06, 0x08, 0x02, 0x10, 0x04, 0x18, 0x03, 0x12, 0x06, 0x08, 0x00, 0x10, 0x09, 0x18, 0x05, 0x1A, 0x06, 0x08],
        [0x17, 0x02, 0x10, 0x00, 0x18, 0x07, 0x32, 0x08, 0x41, 0x31, 0x34, 0x37, 0x38, 0x43, 0x32, 0x43, 0x3A, 0x0E, 0x50, 0x6F],
        [0x27, 0x50, 0x6F, 0x6C, 0x61, 0x72, 0x20, 0x49, 0x4E, 0x57, 0x33, 0x4E, 0x5F, 0x42, 0x0B, 0x30, 0x30, 0x37, 0x38, 0x35],
        [0x37, 0x30, 0x30, 0x37, 0x38, 0x35, 0x36, 0x4A, 0x06, 0x43, 0x6F, 0x70, 0x70, 0x65, 0x72, 0x52, 0x06, 0x55, 0x6E, 0x69],
        [0x47, 0x55, 0x6E, 0x69, 0x5A, 0x10, 0x41, 0x30, 0x39, 0x45, 0x31, 0x41, 0x46, 0x46, 0x46, 0x45, 0x41, 0x31, 0x34, 0x37],
        [0x57, 0x41, 0x30, 0x62, 0x14, 0xC1, 0xA8, 0x78, 0xD5, 0x02, 0x4B, 0x46, 0x1D, 0xC6, 0x6D, 0x38, 0xED, 0x0E, 0x53, 0xB5],
        [0x67, 0xC1, 0xA8, 0x78, 0xD5, 0x02, 0x6A, 0x06, 0x08, 0x03, 0x10, 0x0B, 0x18, 0x00, 0x72, 0x10, 0x0A, 0x06, 0x42, 0x6C],
        [0x77, 0x42, 0x6C, 0x65, 0x41, 0x1A, 0x06, 0x08, 0x09, 0x10, 0x00, 0x18, 0x00, 0x72, 0x17, 0x0A, 0x0D, 0x42, 0x6C, 0x65],
        [0x87, 0x42, 0x6C, 0x65, 0x42, 0x6F, 0x6F, 0x74, 0x6C, 0x6F, 0x61, 0x1A, 0x06, 0x08, 0x04, 0x10, 0x01, 0x18, 0x00, 0x72],
        [0x97, 0x22, 0x0A, 0x03, 0x47, 0x50, 0x53, 0x1A, 0x1B, 0x08, 0x01, 0x10, 0x00, 0x18, 0x00, 0x22, 0x13, 0x61, 0x32, 0x30],
        [0xA7, 0x61, 0x32, 0x30, 0x30, 0x32, 0x30, 0x5F, 0x66, 0x34, 0x64, 0x33, 0x38, 0x36, 0x38, 0x5F, 0x31, 0x78, 0x01, 0x82],
        [0xB7, 0x82, 0x08, 0x0A, 0x06, 0x08, 0x03, 0x10, 0x00, 0x18, 0x02, 0x8A, 0x01, 0x0D, 0x0A, 0x09, 0x5A, 0x48, 0x5F, 0x4A],
        [0xC3, 0x5A, 0x48, 0x5F, 0x4A, 0x41, 0x10, 0x09],
    ]

    static var readResponseMessage: [UInt8] { readResponseFrames.flatMap { $0.dropFirst() } }

    @Test("BlePsFtpUtilsTest.kt: first (06 …), middle (97 …, sequence 9) and last (C3 …, sequence 12) frames")
    func androidHeaderVectors() throws {
        let first = Self.readResponseFrames[0]
        #expect(try PSFTPFrame.decode(first) == PSFTPFrame(isContinuation: false, sequenceNumber: 0, content: .more(Array(first.dropFirst()))))
        let middle = Self.readResponseFrames[9]
        #expect(try PSFTPFrame.decode(middle) == PSFTPFrame(isContinuation: true, sequenceNumber: 9, content: .more(Array(middle.dropFirst()))))
        let last = Self.readResponseFrames[12]
        #expect(try PSFTPFrame.decode(last) == PSFTPFrame(isContinuation: true, sequenceNumber: 12, content: .last([0x5A, 0x48, 0x5F, 0x4A, 0x41, 0x10, 0x09])))
        for frame in [first, middle, last] { #expect(try PSFTPFrame.decode(frame).encode() == frame) }
    }

    @Test("BlePsFtpUtilityTest.swift: single, first, second, last, error FFFE, header-only MORE and LAST, interrupt")
    func iOSHeaderVectors() throws {
        let cases: [([UInt8], PSFTPFrame)] = [
            ([0x02, 0xFF, 0x00], PSFTPFrame(isContinuation: false, sequenceNumber: 0, content: .last([0xFF, 0x00]))),  // test_processSingleFrame
            ([0x06, 0xFF, 0x00], PSFTPFrame(isContinuation: false, sequenceNumber: 0, content: .more([0xFF, 0x00]))),  // test_processFirstFrameInLongSequence
            ([0x17, 0xFF, 0x00], PSFTPFrame(isContinuation: true, sequenceNumber: 1, content: .more([0xFF, 0x00]))),   // test_processSecondFrameInLongSequence
            ([0x23, 0xFF, 0x00], PSFTPFrame(isContinuation: true, sequenceNumber: 2, content: .last([0xFF, 0x00]))),   // test_processLastFrameInLongSequence
            ([0x00, 0xFE, 0xFF], PSFTPFrame(isContinuation: false, sequenceNumber: 0, content: .code(0xFFFE))),        // test_processErrorFrame
            ([0x16], PSFTPFrame(isContinuation: false, sequenceNumber: 1, content: .more([]))),                        // test_processHeaderOnlyMoreFrame
            ([0x02], PSFTPFrame(isContinuation: false, sequenceNumber: 0, content: .last([]))),                        // test_processHeaderOnlyLastFrame
            ([0x00], PSFTPFrame(isContinuation: false, sequenceNumber: 0, content: .interrupted)),                     // test_processInteruptFrame
        ]
        for (bytes, frame) in cases {
            #expect(try PSFTPFrame.decode(bytes) == frame, "\(bytes)")
            #expect(frame.encode() == bytes)
        }
        #expect(PSFTPFrame.cancel.encode() == [0x00, 0x00, 0x00])  // BlePsFtpClient.kt's cancelPacket
    }

    @Test("malformed frames: empty, reserved bit 3, status 2, a one-byte or three-byte error are refused")
    func malformedFrames() {
        #expect(throws: GATTCodecError.truncated(expected: 1, actual: 0)) { try PSFTPFrame.decode([]) }
        #expect(throws: GATTCodecError.reservedValue(field: "PSFTP frame header bit 3", value: 0x0A)) { try PSFTPFrame.decode([0x0A, 0x01]) }
        #expect(throws: GATTCodecError.reservedValue(field: "PSFTP frame status", value: 2)) { try PSFTPFrame.decode([0x04, 0x01]) }
        #expect(throws: GATTCodecError.truncated(expected: 3, actual: 2)) { try PSFTPFrame.decode([0x00, 0x67]) }
        #expect(throws: GATTCodecError.outOfRange(field: "PSFTP error frame length", value: 4)) { try PSFTPFrame.decode([0x00, 0x67, 0x00, 0x00]) }
    }

    @Test("BlePsFtpClientTest.kt read response: the 13 frames join to their payloads; the same message split at MTU 20 gives those frames")
    func readResponse() throws {
        var assembler = PSFTPMessageAssembler()
        for frame in Self.readResponseFrames.dropLast() { #expect(try assembler.receive(frame) == .incomplete) }
        #expect(try assembler.receive(Self.readResponseFrames.last!) == .message(Self.readResponseMessage))
        #expect(Self.readResponseMessage.count == 12 * 19 + 7)
        #expect(try PSFTPFrame.split(Self.readResponseMessage, mtu: 20).map { $0.encode() } == Self.readResponseFrames)
        // "test psftp client request": the device answers 02 22, a one-frame message 22.
        #expect(try assembler.receive([0x02, 0x22]) == .message([0x22]))
    }

    @Test("split then assemble gives the message back at every length around the MTU, sequence numbers wrapping after 15")
    func splitRoundTrip() throws {
        for mtu in [2, 3, 20, 23, 247] {
            for length in Set([0, 1, mtu - 2, mtu - 1, mtu, 2 * (mtu - 1), 2 * (mtu - 1) + 1, 17 * (mtu - 1) + 3]) where length >= 0 {
                let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) }
                let frames = try PSFTPFrame.split(message, mtu: mtu)
                #expect(frames.count == max(1, (length + mtu - 2) / (mtu - 1)))
                #expect(frames.allSatisfy { $0.encode().count <= mtu })
                #expect(frames.enumerated().allSatisfy { $0.element.sequenceNumber == UInt8($0.offset % 16) && $0.element.isContinuation == ($0.offset > 0) })
                var assembler = PSFTPMessageAssembler()
                var outputs: [PSFTPMessageAssembler.Output] = []
                for frame in frames { outputs.append(try assembler.receive(frame.encode())) }
                #expect(outputs.last == .message(message), "mtu \(mtu) length \(length)")
                #expect(outputs.dropLast().allSatisfy { $0 == .incomplete })
            }
        }
        #expect(throws: GATTCodecError.outOfRange(field: "PSFTP MTU", value: 1)) { try PSFTPFrame.split([1], mtu: 1) }
    }

    @Test("the assembler: a device code ends the response (0 with what came before, else the error); out-of-order frames are refused and it starts over")
    func assemblerRules() throws {
        var assembler = PSFTPMessageAssembler()
        #expect(try assembler.receive([0x00, 0x00, 0x00]) == .message([]))
        #expect(try assembler.receive([0x00, 0x67, 0x00]) == .failed(.noSuchFileOrDirectory))
        #expect(PSFTPErrorCode.noSuchFileOrDirectory.description == "NO_SUCH_FILE_OR_DIRECTORY (103)")
        #expect(PSFTPErrorCode(rawValue: 303).name == nil)
        #expect(try assembler.receive([0x06, 0x01]) == .incomplete)
        #expect(try assembler.receive([0x11, 0x00, 0x00]) == .message([0x01]))
        #expect(try assembler.receive([0x00]) == .interrupted)

        // A lost frame (sequence 2 after 0), a repeated first frame, a first frame with the continuation bit.
        #expect(try assembler.receive([0x06, 0x01]) == .incomplete)
        #expect(throws: GATTCodecError.outOfRange(field: "PSFTP sequence number (expected 1)", value: 2)) { try assembler.receive([0x23, 0x02]) }
        #expect(try assembler.receive([0x06, 0x01]) == .incomplete)
        #expect(throws: GATTCodecError.outOfRange(field: "PSFTP sequence number (expected 1)", value: 0)) { try assembler.receive([0x06, 0x01]) }
        #expect(throws: GATTCodecError.outOfRange(field: "PSFTP continuation bit (expected 0)", value: 1)) { try assembler.receive([0x03, 0x01]) }
        #expect(try assembler.receive([0x06, 0x01]) == .incomplete)
        #expect(throws: GATTCodecError.outOfRange(field: "PSFTP continuation bit (expected 1)", value: 0)) { try assembler.receive([0x12, 0x02]) }
        #expect(try assembler.receive([0x02, 0x09]) == .message([0x09]))

        var small = PSFTPMessageAssembler(maximumLength: 3)
        #expect(try small.receive([0x06, 0x01, 0x02]) == .incomplete)
        #expect(throws: GATTCodecError.outOfRange(field: "PSFTP message length", value: 4)) { try small.receive([0x13, 0x03, 0x04]) }
        #expect(try small.receive([0x02, 0x01, 0x02, 0x03]) == .message([0x01, 0x02, 0x03]))
    }

    @Test("RFC60: a query is its id with bit 15 set, a request its operation's length; both decode back")
    func requestMessages() throws {
        // Built by BlePsFtpUtils.kt makeCompleteMessageStream's rules: 16 = REQUEST_RECORDING_STATUS.
        #expect(try PSFTPRequestMessage.query(id: 16).encode() == [0x10, 0x80])
        #expect(try PSFTPRequestMessage.query(id: 0x1234, parameters: [0xAA]).encode() == [0x34, 0x92, 0xAA])
        #expect(try PSFTPRequestMessage.request(operation: [0x08, 0x00], data: [0xFF]).encode() == [0x02, 0x00, 0x08, 0x00, 0xFF])
        let long = [UInt8](repeating: 0x41, count: 300)
        #expect(try PSFTPRequestMessage.request(operation: long).encode().prefix(2) == [0x2C, 0x01])
        for message in [PSFTPRequestMessage.query(id: 16), .query(id: 0x7FFF, parameters: [1, 2]), .request(operation: [0x08, 0x00]),
                        .request(operation: [], data: [3]), .request(operation: long, data: [1])] {
            #expect(try PSFTPRequestMessage.decode(message.encode()) == message)
        }
        #expect(throws: GATTCodecError.outOfRange(field: "PSFTP query id", value: 0x8000)) { try PSFTPRequestMessage.query(id: 0x8000).encode() }
        #expect(throws: GATTCodecError.outOfRange(field: "PSFTP operation length", value: 0x8000)) {
            try PSFTPRequestMessage.request(operation: [UInt8](repeating: 0, count: 0x8000)).encode()
        }
        #expect(throws: GATTCodecError.truncated(expected: 2, actual: 1)) { try PSFTPRequestMessage.decode([0x10]) }
        #expect(throws: GATTCodecError.truncated(expected: 5, actual: 4)) { try PSFTPRequestMessage.decode([0x03, 0x00, 0x08, 0x00]) }
    }
}
