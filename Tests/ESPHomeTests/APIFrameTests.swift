import Testing

@testable import ESPHome

/// The native API's frames, plaintext and encrypted, with byte vectors from aioesphomeapi's tests
/// (tests/test__frame_helper.py: plaintext frames of 0, 4, 192, 256 and 8192 bytes with one- to three-byte types; the
/// noise hello, server hello and "Handshake MAC failure" frames of its wrong-key test): every vector decodes, every
/// truncation waits for more, byte-by-byte feeding gives the same messages, and random bytes end in an error or a wait,
/// never a crash.
@Suite("ESPHome: native API frames")
struct APIFrameTests {
    static let plaintextCases: [(payloadCount: Int, type: UInt32)] = [(0, 1), (192, 1), (192, 100), (4, 100), (8192, 8192), (256, 256),
                                                                      (1, 32768)]

    static func hex(_ text: String) -> [UInt8] { NoiseHandshakeTests.hex(text) }

    @Test("plaintext: aioesphomeapi's frames encode as it writes them and decode whole, split anywhere")
    func plaintextVectors() throws {
        for (count, type) in Self.plaintextCases {
            let message = APIMessage(type: type, payload: [UInt8](repeating: 0x42, count: count))
            let encoded = PlaintextFrameDecoder.encode(message)
            #expect(Array(encoded.prefix(1)) == [0x00])
            #expect(encoded.count == 1 + VarUInt.encode(UInt32(count)).count + VarUInt.encode(type).count + count)
            var whole = PlaintextFrameDecoder()
            whole.append(encoded + encoded)
            #expect(try whole.next() == message)
            #expect(try whole.next() == message)
            #expect(try whole.next() == nil)
            // Every truncation waits; the rest completes it.
            for cut in 0..<encoded.count {
                var decoder = PlaintextFrameDecoder()
                decoder.append(encoded[..<cut])
                #expect(try decoder.next() == nil, "\(count) bytes, type \(type), cut at \(cut)")
                decoder.append(encoded[cut...])
                #expect(try decoder.next() == message)
            }
        }
        // Varints as aioesphomeapi writes them (varuint_to_bytes): 192 is c0 01, 8192 is 80 40, 32768 is 80 80 02.
        #expect(VarUInt.encode(192) == [0xC0, 0x01])
        #expect(VarUInt.encode(8192) == [0x80, 0x40])
        #expect(VarUInt.encode(32768) == [0x80, 0x80, 0x02])
    }

    @Test("plaintext: the encrypted preamble says the device wants its key; other preambles, long varints and huge frames are refused")
    func plaintextRefusals() {
        var encrypted = PlaintextFrameDecoder()
        encrypted.append(Self.hex("010000"))
        #expect(throws: APIFrameError.requiresEncryption) { try encrypted.next() }
        var other = PlaintextFrameDecoder()
        other.append([0x07, 0x00, 0x01])
        #expect(throws: APIFrameError.badPreamble(7)) { try other.next() }
        var long = PlaintextFrameDecoder()
        long.append([0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01])
        #expect(throws: APIFrameError.badVarint) { try long.next() }
        var huge = PlaintextFrameDecoder(maximumPayload: 1000)
        huge.append([0x00] + VarUInt.encode(1001) + [0x01])
        #expect(throws: APIFrameError.tooLarge(1001)) { try huge.next() }
    }

    @Test("noise: aioesphomeapi's wrong-key exchange — client hello, handshake frame, server hello, MAC failure")
    func noiseVectors() throws {
        var client = NoiseFrameDecoder()
        client.append(Self.hex("010000") + Self.hex("010031001ed7f7bb0b74085418258ed5928931bc36ade7cf06937fcff089044d4ab142643f1b2c9935bb77696f23d930836737a4"))
        #expect(try client.next() == [])
        let handshake = try #require(try client.next())
        #expect(handshake.count == 49)
        guard case .message(let message) = try NoiseHandshakeFrames.parseHandshake(handshake) else {
            Issue.record("not a handshake message")
            return
        }
        #expect(message.count == 48)
        #expect(try client.next() == nil)

        var server = NoiseFrameDecoder()
        server.append(Self.hex("01000d01736572766963657465737400") + Self.hex("0100160148616e647368616b65204d4143206661696c757265"))
        let hello = try #require(try server.next())
        #expect(try NoiseHandshakeFrames.parseServerHello(hello) == .init(name: "servicetest", macAddress: nil))
        #expect(try NoiseFrameDecoder.encode(NoiseHandshakeFrames.serverHello(.init(name: "servicetest", macAddress: nil)))
                == Self.hex("01000d01736572766963657465737400"))
        let failure = try #require(try server.next())
        #expect(try NoiseHandshakeFrames.parseHandshake(failure) == .failure(NoiseHandshakeFrames.macFailure))
        #expect(try NoiseFrameDecoder.encode(NoiseHandshakeFrames.failure(NoiseHandshakeFrames.macFailure))
                == Self.hex("0100160148616e647368616b65204d4143206661696c757265"))
    }

    @Test("noise: server hellos with a MAC, without a name, or of another protocol")
    func serverHellos() throws {
        let withMAC = NoiseHandshakeFrames.serverHello(.init(name: "proxy-kitchen", macAddress: "AABBCCDDEEFF"))
        #expect(try NoiseHandshakeFrames.parseServerHello(withMAC) == .init(name: "proxy-kitchen", macAddress: "AABBCCDDEEFF"))
        #expect(try NoiseHandshakeFrames.parseServerHello([0x01]) == .init(name: nil, macAddress: nil))
        #expect(throws: APIFrameError.self) { try NoiseHandshakeFrames.parseServerHello([]) }
        #expect(throws: APIFrameError.self) { try NoiseHandshakeFrames.parseServerHello([0x02, 0x41, 0x00]) }
        #expect(throws: APIFrameError.self) { try NoiseHandshakeFrames.parseHandshake([]) }
        #expect(throws: APIFrameError.self) { try NoiseHandshakeFrames.parseHandshake([0x05]) }
    }

    @Test("noise: every truncation of a frame waits; the plaintext preamble says the device has no key; the inner layout is exact")
    func noiseFraming() throws {
        let message = APIMessage(type: 93, payload: Array(0..<200).map { UInt8($0) })
        let inner = try NoiseMessageLayout.encode(message)
        #expect(Array(inner.prefix(4)) == [0x00, 93, 0x00, 200])
        #expect(try NoiseMessageLayout.decode(inner) == message)
        #expect(throws: APIFrameError.badInnerLength) { try NoiseMessageLayout.decode(inner.dropLast(1).map { $0 }) }
        #expect(throws: APIFrameError.badInnerLength) { try NoiseMessageLayout.decode([0, 1, 0]) }
        #expect(throws: APIFrameError.tooLarge(NoiseMessageLayout.maximumPayload + 1)) {
            try NoiseMessageLayout.encode(APIMessage(type: 1, payload: [UInt8](repeating: 0, count: NoiseMessageLayout.maximumPayload + 1)))
        }
        let frame = try NoiseFrameDecoder.encode(inner)
        for cut in 0..<frame.count {
            var decoder = NoiseFrameDecoder()
            decoder.append(frame[..<cut])
            #expect(try decoder.next() == nil, "cut at \(cut)")
            decoder.append(frame[cut...])
            #expect(try decoder.next() == inner)
        }
        var plaintext = NoiseFrameDecoder()
        plaintext.append([0x00, 0x00, 0x07])
        #expect(throws: APIFrameError.plaintextPeer) { try plaintext.next() }
        #expect(throws: APIFrameError.tooLarge(65536)) { try NoiseFrameDecoder.encode([UInt8](repeating: 0, count: 65536)) }
    }

    @Test("fed one byte at a time, a long stream of both framings decodes to the same messages")
    func byteByByte() throws {
        let messages = (0..<50).map { APIMessage(type: UInt32($0 * 37 % 130 + 1), payload: [UInt8](repeating: UInt8($0), count: $0 * 13)) }
        let stream = messages.flatMap(PlaintextFrameDecoder.encode)
        var decoder = PlaintextFrameDecoder()
        var decoded: [APIMessage] = []
        for byte in stream {
            decoder.append([byte])
            while let message = try decoder.next() { decoded.append(message) }
        }
        #expect(decoded == messages)

        let frames = try messages.map { try NoiseFrameDecoder.encode(NoiseMessageLayout.encode($0)) }.flatMap { $0 }
        var noise = NoiseFrameDecoder()
        var opened: [APIMessage] = []
        for byte in frames {
            noise.append([byte])
            while let frame = try noise.next() { opened.append(try NoiseMessageLayout.decode(frame)) }
        }
        #expect(opened == messages)
    }

    @Test("random bytes end in an error or a wait, never a crash or a message that was not sent", arguments: 0..<4)
    func randomInput(seed: UInt64) {
        var generator = SplitMix(seed: seed)
        for _ in 0..<500 {
            let bytes = (0..<Int(generator.next() % 64)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            var plaintext = PlaintextFrameDecoder(maximumPayload: 4096)
            plaintext.append(bytes)
            var noise = NoiseFrameDecoder()
            noise.append(bytes)
            for _ in 0..<8 {
                guard let message = try? plaintext.next() else { break }
                #expect(message.payload.count <= 4096)
            }
            for _ in 0..<8 {
                guard let frame = try? noise.next() else { break }
                _ = try? NoiseMessageLayout.decode(frame)
                _ = try? NoiseHandshakeFrames.parseServerHello(frame)
                _ = try? NoiseHandshakeFrames.parseHandshake(frame)
            }
        }
    }
}

/// A small seeded generator, so a random test fails the same way every time.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
