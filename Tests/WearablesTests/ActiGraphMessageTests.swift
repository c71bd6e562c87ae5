import Testing

@testable import Wearables

/// Requests and responses of the ActiGraph Control characteristic as whole frames (docs/protocols/actigraph.md),
/// the stream configuration the driver keeps, and the sequence-gap count of its streams.
@Suite("ActiGraph messages and driver values")
struct ActiGraphMessageTests {
    @Test("requests frame as opcode, sequence, length, payload, CRC; the Link decodes them back")
    func requestFrames() throws {
        let settings = ActiGraphStreamSettings(rawStreaming: true, rawRateHz: 100, imu: [.gyroscope])
        let cases: [(ActiGraphRequest, [UInt8])] = [
            (.status, []),
            (.setStreams(settings), [0x01, 0x64, 0x02]),
            (.epochOpen(ActiGraphEpochRange(start: 0x55AD_C4EC, stop: 0x55AD_C528)), [0xEC, 0xC4, 0xAD, 0x55, 0x28, 0xC5, 0xAD, 0x55]),
            (.epochPage(0x0102), [0x02, 0x01]),
            (.epochAck(7), [0x07, 0x00]),
        ]
        for (request, payload) in cases {
            #expect(request.payload() == payload)
            let frame = request.frame(sequence: 9)
            #expect(frame.opcode == request.opcode.rawValue)
            let decoded = try VendorFrame(decoding: frame.encoded())
            #expect(try ActiGraphRequest(frame: decoded) == request)
        }
    }

    @Test("a STATUS request is the 6 bytes 01 00 00 00 then CRC-16/CCITT-FALSE, as GoFIT frames are built")
    func statusFrameBytes() {
        let bytes = ActiGraphRequest.status.frame(sequence: 0).encoded()
        #expect(Array(bytes.prefix(4)) == [0x01, 0x00, 0x00, 0x00])
        let crc = FrameCRC16.checksum([0x01, 0x00, 0x00, 0x00])
        #expect(Array(bytes.suffix(2)) == [UInt8(crc & 0xFF), UInt8(crc >> 8)])
    }

    @Test("the Link refuses unknown opcodes and payloads of the wrong length")
    func malformedRequests() {
        #expect(throws: GATTCodecError.unknownIdentifier(field: "opcode", value: 0x02)) {
            try ActiGraphRequest(frame: VendorFrame(opcode: 0x02, sequence: 0))
        }
        #expect(throws: GATTCodecError.self) { try ActiGraphRequest(frame: VendorFrame(opcode: 0x21, sequence: 0, payload: [1])) }
        #expect(throws: GATTCodecError.self) { try ActiGraphRequest(frame: VendorFrame(opcode: 0x01, sequence: 0, payload: [1])) }
        #expect(throws: GATTCodecError.self) {
            try ActiGraphRequest(frame: VendorFrame(opcode: 0x10, sequence: 0, payload: [1, 100, 0, 0]))
        }
    }

    @Test("a response is opcode | 0x80, the request's sequence, status, then data; no status byte or bit is refused")
    func responses() throws {
        let response = ActiGraphResponse(opcode: .epochOpen, sequence: 3, status: .ok, data: [1, 0, 0, 0, 1, 0])
        let frame = response.frame()
        #expect(frame.opcode == 0xA0)
        #expect(frame.payload == [0x80, 1, 0, 0, 0, 1, 0])
        #expect(try ActiGraphResponse(frame: frame) == response)
        let failed = try ActiGraphResponse(frame: VendorFrame(opcode: 0x90, sequence: 1, payload: [0x8B]))
        #expect(failed.status.commandError?.vendorCode == 11)
        #expect(throws: GATTCodecError.truncated(expected: 1, actual: 0)) {
            try ActiGraphResponse(frame: VendorFrame(opcode: 0x81, sequence: 0))
        }
        #expect(throws: GATTCodecError.self) { try ActiGraphResponse(frame: VendorFrame(opcode: 0x01, sequence: 0, payload: [0x80])) }
    }

    @Test("the kept configuration parses back to the same settings, and the state shows each sensor")
    func configurationRoundTrip() throws {
        let settings = ActiGraphStreamSettings(rawStreaming: true, rawRateHz: 50, imu: [.gyroscope, .temperature])
        let parsed = try ActiGraphConfigurationRequest.parse(settings.configurationObject, current: .off)
        #expect(parsed.streams == settings)
        #expect(parsed.epochRange == nil)
        let state = settings.sensorsState
        #expect(state["accelerometer"]?["rate_hz"] == .integer(50))
        #expect(state["accelerometer"]?["enabled"] == .flag(true))
        #expect(state["gyroscope"]?["enabled"] == .flag(true))
        #expect(state["magnetometer"]?["enabled"] == .flag(false))
    }

    @Test("a stream's sequence gap counts the packets missed times their size; repeats and restarts count nothing")
    func sequenceGaps() {
        var sequence = StreamSequence()
        #expect(sequence.advance(to: 10, samplesPerPacket: 1) == 0)
        #expect(sequence.advance(to: 11, samplesPerPacket: 1) == 0)
        #expect(sequence.advance(to: 14, samplesPerPacket: 1) == 2)
        #expect(sequence.advance(to: 17, samplesPerPacket: 4) == 8)
        #expect(sequence.advance(to: 17, samplesPerPacket: 4) == 0, "a repeat")
        #expect(sequence.advance(to: 3, samplesPerPacket: 4) == 0, "the Link restarted its count")
        var wrapping = StreamSequence()
        #expect(wrapping.advance(to: 0xFFFF, samplesPerPacket: 1) == 0)
        #expect(wrapping.advance(to: 0x0000, samplesPerPacket: 1) == 0, "wraps without a gap")
        #expect(wrapping.advance(to: 0x0002, samplesPerPacket: 1) == 1)
    }

    @Test("a Link is recognised by its vendor service, or likely by a TAS serial name")
    func matching() {
        // The driver's match and serial work on BlueZ's device properties; the name rule alone is checked here.
        #expect(ActiGraphDriver.serialPattern("TAS1D12345678"))
        #expect(!ActiGraphDriver.serialPattern("TAS1d12345678"))
        #expect(!ActiGraphDriver.serialPattern("TAS1D1234567"))
        #expect(!ActiGraphDriver.serialPattern("GT9X Link"))
    }
}
