import Testing

@testable import MQTT

/// The word-at-a-time checks against the plain byte-at-a-time definitions they stand for.
@Suite struct ByteWordsTests {
    private static func word(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }

    @Test("each word test agrees with its definition: every byte value at every place, among random bytes")
    func wordTests() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10 {
            for place in 0..<8 {
                for value in UInt8.min...UInt8.max {
                    var bytes = (0..<8).map { _ in UInt8.random(in: 0x20...0x7E, using: &generator) }
                    if Bool.random(using: &generator) { bytes = (0..<8).map { _ in UInt8.random(in: .min ... .max, using: &generator) } }
                    bytes[place] = value
                    let word = Self.word(bytes)
                    for limit: UInt8 in [1, 0x20, 0x80] {
                        #expect(ByteWords.hasByte(below: limit, in: word) == bytes.contains { $0 < limit }, "below \(limit): \(bytes)")
                    }
                    for limit: UInt8 in [0, 0x7E, 0x7F] {
                        #expect(ByteWords.hasByte(above: limit, in: word) == bytes.contains { $0 > limit }, "above \(limit): \(bytes)")
                    }
                    for byte: UInt8 in [0, UInt8(ascii: "+"), UInt8(ascii: "#"), 0xFF] {
                        #expect(ByteWords.hasByte(byte, in: word) == bytes.contains(byte), "equal to \(byte): \(bytes)")
                    }
                }
            }
        }
    }

    @Test("topic checks of every length up to 40 bytes, one odd byte at every place, agree with their definitions")
    func topicChecks() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...40 {
            for place in 0..<max(length, 1) {
                for value: UInt8 in [0, 0x1F, 0x20, UInt8(ascii: "#"), UInt8(ascii: "+"), 0x7E, 0x7F, 0x80, 0xC3, 0xFF] {
                    var bytes = (0..<length).map { _ in UInt8.random(in: 0x20...0x7E, using: &generator) }
                    if length > 0 { bytes[place] = value }
                    // Lone bytes ≥ 0x80 are not UTF-8: the checks read the string's repaired bytes, as the packet would.
                    let topic = String(decoding: bytes, as: UTF8.self)
                    let utf8 = Array(topic.utf8)
                    #expect(PublishPacket.isPrintableASCII(topic) == utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E }, "\(utf8)")
                    let valid = !utf8.isEmpty && !utf8.contains { $0 == 0 || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }
                    #expect(TopicValidation.isValidPublishTopic(topic) == valid, "\(utf8)")
                }
            }
        }
    }

    @Test("topics too long for MQTT's two-byte length are refused")
    func lengths() {
        let longest = String(repeating: "a", count: 65_535)
        #expect(TopicValidation.isValidPublishTopic(longest))
        #expect(PublishPacket.isPrintableASCII(longest))
        #expect(!TopicValidation.isValidPublishTopic(longest + "a"))
        #expect(!PublishPacket.isPrintableASCII(longest + "a"))
    }
}
