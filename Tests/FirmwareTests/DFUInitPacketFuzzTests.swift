import Crypto
import SimulatedWearables
import Testing

@testable import Firmware

/// The Secure DFU init packet reader on input nobody meant: random bytes, every truncation, and single-byte
/// changes of a signed packet. Each either decodes to a packet that encodes and decodes back to itself, or throws
/// `malformedInitPacket`; nothing crashes. Deterministic: SplitMix64 from fixed seeds.
@Suite("DFU init packet fuzzing")
struct DFUInitPacketFuzzTests {
    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// A signed SoftDevice+bootloader packet: every message and most fields of the schema are in it.
    static let signedPacket: [UInt8] = {
        let image = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let key = try! P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x2A, count: 32))
        return DFUInitPacket(describing: image, as: .softDeviceBootloader, firmwareVersion: 7, hardwareVersion: 52,
                             softDeviceRequired: [0xB7, 0x101], softDeviceSizeOfCombined: 2000)
            .signed(with: key).encoded()
    }()

    /// Decodes `bytes`; a packet must survive encode → decode unchanged, an error must be the typed one.
    static func check(_ bytes: [UInt8]) {
        do {
            let packet = try DFUInitPacket(decoding: bytes)
            #expect(try DFUInitPacket(decoding: packet.encoded()) == packet, "\(bytes)")
        } catch {
            guard case .malformedInitPacket = error else {
                Issue.record("\(bytes): \(error)")
                return
            }
        }
    }

    @Test("random byte strings of 0–96 bytes")
    func randomBytes() {
        var random = SplitMix64(state: 23)
        for _ in 0..<20_000 {
            let count = Int(random.next() % 97)
            Self.check((0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        }
    }

    @Test("every truncation of a signed packet is refused")
    func everyTruncation() {
        for length in 0..<Self.signedPacket.count {
            #expect(throws: DFUPackageError.self) { try DFUInitPacket(decoding: Array(Self.signedPacket.prefix(length))) }
        }
    }

    @Test("every single-byte change of a signed packet, and random multi-byte changes")
    func mutations() {
        let packet = Self.signedPacket
        for index in packet.indices {
            for value: UInt8 in [0x00, 0x01, 0x7F, 0x80, 0xFF, packet[index] ^ 0x08] {
                var mutated = packet
                mutated[index] = value
                Self.check(mutated)
            }
        }
        var random = SplitMix64(state: 5)
        for _ in 0..<5_000 {
            var mutated = packet
            for _ in 0..<(1 + random.next() % 4) {
                mutated[Int(random.next() % UInt64(mutated.count))] = UInt8(truncatingIfNeeded: random.next())
            }
            Self.check(mutated)
        }
    }
}
