import MQTT
import Testing

/// The QoS 0 PUBLISH packets the client writes itself. Vectors: the variable byte integers of MQTT 5.0 §1.5.5's table
/// (the same encoding as MQTT 3.1.1 §2.2.3's remaining length), and packets laid out by hand from §3.3 of both.
@Suite struct PublishPacketTests {
    @Test(arguments: [
        (0, [0x00]), (127, [0x7F]), (128, [0x80, 0x01]), (16_383, [0xFF, 0x7F]), (16_384, [0x80, 0x80, 0x01]),
        (2_097_151, [0xFF, 0xFF, 0x7F]), (2_097_152, [0x80, 0x80, 0x80, 0x01]), (268_435_455, [0xFF, 0xFF, 0xFF, 0x7F]),
    ] as [(Int, [UInt8])])
    func variableByteIntegersAsTheSpecificationTablesThem(value: Int, bytes: [UInt8]) {
        var buffer: [UInt8] = []
        PublishPacket.appendVariableByteInteger(value, to: &buffer)
        #expect(buffer == bytes)
    }

    @Test func aPacketWithoutPropertiesInBothVersions() {
        let message = OutgoingMessage(topic: "a/b", text: "hi")
        #expect(packet(message, .v311) == [0x30, 0x07, 0x00, 0x03, 0x61, 0x2F, 0x62, 0x68, 0x69])
        // MQTT 5: a zero property length before the payload.
        #expect(packet(message, .v5) == [0x30, 0x08, 0x00, 0x03, 0x61, 0x2F, 0x62, 0x00, 0x68, 0x69])
        #expect(PublishPacket(message, version: .v311)?.size == 9)
        #expect(PublishPacket(message, version: .v5)?.size == 10)
    }

    @Test func aContentTypeIsPropertyThreeWithMQTT5AndLeftOutWithMQTT311() {
        let message = OutgoingMessage(topic: "a/b", text: "hi", properties: MQTTProperties(contentType: "application/json"))
        let type = Array("application/json".utf8)
        // Remaining length 2 + 3 (topic) + 1 + 19 (properties) + 2 (payload) = 27.
        #expect(packet(message, .v5) == [0x30, 0x1B, 0x00, 0x03, 0x61, 0x2F, 0x62, 0x13, 0x03, 0x00, 0x10] + type + [0x68, 0x69])
        #expect(packet(message, .v311) == [0x30, 0x07, 0x00, 0x03, 0x61, 0x2F, 0x62, 0x68, 0x69])
        #expect(PublishPacket(message, version: .v5)?.size == 29)
    }

    @Test func aLongPayloadTakesALongerRemainingLength() {
        let message = OutgoingMessage(topic: "t", payload: [UInt8](repeating: 7, count: 300))
        let bytes = packet(message, .v311)
        // 2 + 1 + 300 = 303 = 0b10_0101111: 0xAF 0x02.
        #expect(Array(bytes.prefix(3)) == [0x30, 0xAF, 0x02])
        #expect(bytes.count == 306)
        #expect(PublishPacket(message, version: .v311)?.size == 306)
    }

    @Test func onlyASamplesShapeFits() {
        #expect(fits(OutgoingMessage(topic: "wear2mqtt/strap/sensor/heart_rate", text: "{}",
                                                   properties: MQTTProperties(contentType: "application/json"))))
        #expect(!fits(OutgoingMessage(topic: "t", text: "x", qos: .atLeastOnce)))
        #expect(!fits(OutgoingMessage(topic: "t", text: "x", retain: true)))
        #expect(!fits(OutgoingMessage(topic: "t", text: "x", properties: MQTTProperties(responseTopic: "r"))))
        #expect(!fits(OutgoingMessage(topic: "t", text: "x", properties: MQTTProperties(correlationData: [1]))))
        #expect(!fits(OutgoingMessage(topic: "t", text: "x", properties: MQTTProperties(messageExpiryInterval: 5))))
        #expect(!fits(OutgoingMessage(topic: "t", text: "x", properties: MQTTProperties(userProperties: [("a", "b")]))))
        // What a broker may take for a malformed packet goes through libmosquitto's own check instead.
        #expect(!fits(OutgoingMessage(topic: "a\u{1}b", text: "x")))
        #expect(!fits(OutgoingMessage(topic: "a\u{7F}b", text: "x")))
        #expect(!fits(OutgoingMessage(topic: "caf\u{E9}", text: "x")))
        #expect(!fits(OutgoingMessage(topic: "t", text: "x", properties: MQTTProperties(contentType: "a\u{FFFF}"))))
        #expect(!fits(OutgoingMessage(topic: String(repeating: "t", count: 65_536), text: "x")))
        #expect(fits(OutgoingMessage(topic: String(repeating: "t", count: 65_535), text: "x")))
    }

    private func packet(_ message: OutgoingMessage, _ version: MQTTClientConfiguration.ProtocolVersion) -> [UInt8] {
        var buffer: [UInt8] = []
        PublishPacket(message, version: version)?.append(to: &buffer)
        return buffer
    }

    private func fits(_ message: OutgoingMessage) -> Bool { PublishPacket(message, version: .v5) != nil }
}
