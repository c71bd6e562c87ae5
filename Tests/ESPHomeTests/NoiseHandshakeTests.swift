import SystemCrypto
import Testing

@testable import ESPHome

/// The Noise handshake against the published test vector for `Noise_NNpsk0_25519_ChaChaPoly_SHA256` (cacophony's
/// vectors, as carried in snow's tests/vectors/cacophony.txt): both roles produce every handshake and transport
/// message byte for byte; and every way a handshake can go wrong is refused, not survived.
@Suite("ESPHome: the Noise NNpsk0 handshake")
struct NoiseHandshakeTests {
    /// cacophony.txt, the vector whose protocol_name is Noise_NNpsk0_25519_ChaChaPoly_SHA256.
    enum Vector {
        static let prologue = hex("4a6f686e2047616c74")
        static let psk = hex("54686973206973206d7920417573747269616e20706572737065637469766521")
        static let initiatorEphemeral = hex("893e28b9dc6ca8d611ab664754b8ceb7bac5117349a4439a6b0569da977c464a")
        static let responderEphemeral = hex("bbdb4cdbd309f1a1f2e1456967fe288cadd6f712d65dc7b7793d5e63da6b375b")
        static let handshakeHash = hex("f4d03dc34495c95729ea6de9e1b59004b59733102488b3e24bc441e0be208eaf")
        static let messages: [(payload: [UInt8], ciphertext: [UInt8])] = [
            (hex("4c756477696720766f6e204d69736573"),
             hex("ca35def5ae56cec33dc2036731ab14896bc4c75dbb07a61f879f8e3afa4c794479b962b8aff8485742ac32f905ba45369e2465fb59e138a93d67a0d1266b6a54")),
            (hex("4d757272617920526f746862617264"),
             hex("95ebc60d2b1fa672c1f46a8aa265ef51bfe38e7ccb39ec5be34069f144808843d6062704d5a9c422a8e834423f8c1feada7e8d0d910a1a2cd030fb584221e3")),
            (hex("462e20412e20486179656b"), hex("e632c3763d7669067383433197a3baddf146e9e70ad4b4e9e59e0f")),
            (hex("4361726c204d656e676572"), hex("64c6bee32ea91c8474bb4c21d7a700109ad45af77b29764ba5eb1e")),
            (hex("4a65616e2d426170746973746520536179"), hex("e2fa0bed0603b62d3ccac2ecabbf3fe33f3e86514909b323361626266cb2471cc8")),
            (hex("457567656e2042f6686d20766f6e2042617765726b"),
             hex("0c01dc9cec1fe4ddd692e8dd32188aa351088dc91183639a53b57aa4692b5ebdef8b8ca111")),
        ]
    }

    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    static func pair(psk: [UInt8] = Vector.psk, responderPSK: [UInt8]? = nil) throws -> (NoiseHandshake, NoiseHandshake) {
        let initiator = try NoiseHandshake(role: .initiator, preSharedKey: psk, prologue: Vector.prologue,
                                           ephemeral: .init(rawRepresentation: Vector.initiatorEphemeral))
        let responder = try NoiseHandshake(role: .responder, preSharedKey: responderPSK ?? psk, prologue: Vector.prologue,
                                           ephemeral: .init(rawRepresentation: Vector.responderEphemeral))
        return (initiator, responder)
    }

    @Test("both roles write and read the vector's handshake and transport messages byte for byte")
    func publishedVector() throws {
        var (initiator, responder) = try Self.pair()
        let first = try initiator.writeMessage(Vector.messages[0].payload)
        #expect(first == Vector.messages[0].ciphertext)
        #expect(try responder.readMessage(first) == Vector.messages[0].payload)
        let second = try responder.writeMessage(Vector.messages[1].payload)
        #expect(second == Vector.messages[1].ciphertext)
        #expect(try initiator.readMessage(second) == Vector.messages[1].payload)
        #expect(initiator.isComplete && responder.isComplete)
        #expect(initiator.handshakeHash == Vector.handshakeHash)
        #expect(responder.handshakeHash == Vector.handshakeHash)

        // Transport messages alternate, initiator first, as the vector lists them.
        var initiatorSide = try initiator.transport(), responderSide = try responder.transport()
        for (index, message) in Vector.messages.enumerated().dropFirst(2) {
            if index % 2 == 0 {
                let sealed = try initiatorSide.sending.encrypt(message.payload)
                #expect(sealed == message.ciphertext, "message \(index)")
                #expect(try responderSide.receiving.decrypt(sealed) == message.payload)
            } else {
                let sealed = try responderSide.sending.encrypt(message.payload)
                #expect(sealed == message.ciphertext, "message \(index)")
                #expect(try initiatorSide.receiving.decrypt(sealed) == message.payload)
            }
        }
    }

    @Test("ESPHome's own handshake: empty payloads, its prologue, fresh keys; both sides agree and talk")
    func esphomeShape() throws {
        let key = (0..<32).map { UInt8($0 * 7 & 0xFF) }
        var initiator = try NoiseHandshake(role: .initiator, preSharedKey: key)
        var responder = try NoiseHandshake(role: .responder, preSharedKey: key)
        let first = try initiator.writeMessage()
        #expect(first.count == 48)
        #expect(try responder.readMessage(first).isEmpty)
        let second = try responder.writeMessage()
        #expect(second.count == 48)
        #expect(try initiator.readMessage(second).isEmpty)
        var a = try initiator.transport(), b = try responder.transport()
        let sealed = try a.sending.encrypt([1, 2, 3])
        #expect(try b.receiving.decrypt(sealed) == [1, 2, 3])
        let back = try b.sending.encrypt([4])
        #expect(try a.receiving.decrypt(back) == [4])
    }

    @Test("a wrong pre-shared key fails the responder's read (the proxy's 'Handshake MAC failure'), and ends the handshake")
    func wrongKey() throws {
        var (initiator, responder) = try Self.pair(responderPSK: [UInt8](repeating: 1, count: 32))
        let first = try initiator.writeMessage()
        #expect(throws: NoiseError.authenticationFailed) { try responder.readMessage(first) }
        #expect(throws: NoiseError.self) { try responder.writeMessage() }
        #expect(!responder.isComplete)
    }

    @Test("out of order, short, damaged, or not a key: refused")
    func refusals() throws {
        #expect(throws: NoiseError.self) { try NoiseHandshake(role: .initiator, preSharedKey: [1, 2, 3]) }
        var (initiator, responder) = try Self.pair()
        #expect(throws: NoiseError.self) { try responder.writeMessage() }
        #expect(throws: NoiseError.self) { try initiator.readMessage(Vector.messages[1].ciphertext) }
        #expect(throws: NoiseError.self) { try initiator.transport() }
        let first = try initiator.writeMessage()
        #expect(throws: NoiseError.self) { try initiator.writeMessage() }
        for length in 0..<48 {
            var fresh = try Self.pair().1
            #expect(throws: NoiseError.self, "\(length) bytes") { try fresh.readMessage(Array(first.prefix(length))) }
        }
        for position in [0, 31, 32, 47] {
            var damaged = first
            damaged[position] ^= 0x01
            var fresh = try Self.pair().1
            #expect(throws: NoiseError.self, "bit flipped at \(position)") { try fresh.readMessage(damaged) }
        }
        _ = try responder.readMessage(first)
        let second = try responder.writeMessage()
        var damaged = second
        damaged[40] ^= 0x80
        #expect(throws: NoiseError.authenticationFailed) { try initiator.readMessage(damaged) }
    }

    @Test("a transport message that does not authenticate is refused and does not move the counter")
    func transportTampering() throws {
        var (initiator, responder) = try Self.pair()
        _ = try responder.readMessage(initiator.writeMessage())
        _ = try initiator.readMessage(responder.writeMessage())
        var a = try initiator.transport(), b = try responder.transport()
        let sealed = try a.sending.encrypt([9, 9, 9])
        var damaged = sealed
        damaged[0] ^= 1
        #expect(throws: NoiseError.authenticationFailed) { try b.receiving.decrypt(damaged) }
        #expect(throws: NoiseError.self) { try b.receiving.decrypt(Array(sealed.prefix(15))) }
        #expect(try b.receiving.decrypt(sealed) == [9, 9, 9])
        // Replayed: the counter moved on, so the same bytes no longer open.
        #expect(throws: NoiseError.authenticationFailed) { try b.receiving.decrypt(sealed) }
    }
}
