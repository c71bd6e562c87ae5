/// The bytes of a QoS 0 PUBLISH packet that is not retained and carries at most a content type: the shape of every
/// sample. `MosquittoConnection` writes these itself, all of an iteration's in one `send` (docs/decisions.md, "Samples
/// are written past libmosquitto"); anything else goes through libmosquitto.
///
/// MQTT 3.1.1 §3.3 and MQTT 5.0 §3.3: a fixed header (type 3, no flags), the remaining length as a variable byte
/// integer (§1.5.5 / §2.2.3), the topic as a UTF-8 string with a two-byte length, with MQTT 5 the properties'
/// length and the properties (content type, identifier 3, a UTF-8 string), then the payload. No packet identifier
/// at QoS 0.
public enum PublishPacket {
    /// The largest remaining length MQTT can express (four bytes of variable byte integer).
    public static let maximumRemainingLength = 268_435_455

    /// Whether `message` has this shape; when not (QoS above 0, retained, other properties, a topic over 65,535
    /// bytes) libmosquitto must send it. Topic and content type must be printable ASCII, as every topic of the
    /// contract is: a broker closes the connection of a client that sends a control character or a Unicode
    /// non-character (mosquitto does), which libmosquitto's own check refuses before sending.
    public static func fits(_ message: OutgoingMessage) -> Bool {
        guard message.qos == .atMostOnce, !message.retain, isPrintableASCII(message.topic, upTo: Int(UInt16.max)) else {
            return false
        }
        let properties = message.properties
        guard properties.responseTopic == nil, properties.correlationData == nil, properties.messageExpiryInterval == nil,
              properties.userProperties.isEmpty else { return false }
        return properties.contentType.map { isPrintableASCII($0, upTo: Int(UInt16.max)) } ?? true
    }

    private static func isPrintableASCII(_ text: String, upTo maximum: Int) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard bytes.count <= maximum else { return false }
            for byte in bytes where byte < 0x20 || byte > 0x7E { return false }
            return true
        }
    }

    /// The packet's size in bytes, or nil when its remaining length exceeds what MQTT allows. Only for messages that
    /// `fit`.
    public static func size(of message: OutgoingMessage, version: MQTTClientConfiguration.ProtocolVersion) -> Int? {
        let remaining = remainingLength(of: message, version: version)
        guard remaining <= maximumRemainingLength else { return nil }
        return 1 + variableByteIntegerSize(remaining) + remaining
    }

    /// Appends the packet for `message` (which must `fit`, with a `size`) to `buffer`. MQTT 3.1.1 has no properties:
    /// its content type is not sent, as libmosquitto does not send it either.
    public static func append(_ message: OutgoingMessage, version: MQTTClientConfiguration.ProtocolVersion,
                              to buffer: inout [UInt8]) {
        buffer.append(0x30)
        appendVariableByteInteger(remainingLength(of: message, version: version), to: &buffer)
        appendString(message.topic, to: &buffer)
        if version == .v5 {
            if let contentType = message.properties.contentType {
                appendVariableByteInteger(3 + contentType.utf8.count, to: &buffer)
                buffer.append(0x03)
                appendString(contentType, to: &buffer)
            } else {
                buffer.append(0)
            }
        }
        buffer.append(contentsOf: message.payload)
    }

    /// §1.5.5: seven bits a byte, least significant first, the top bit set on every byte but the last.
    public static func appendVariableByteInteger(_ value: Int, to buffer: inout [UInt8]) {
        precondition(value >= 0 && value <= maximumRemainingLength, "not a variable byte integer: \(value)")
        var rest = value
        repeat {
            let digit = UInt8(rest & 0x7F)
            rest >>= 7
            buffer.append(rest > 0 ? digit | 0x80 : digit)
        } while rest > 0
    }

    static func variableByteIntegerSize(_ value: Int) -> Int {
        switch value {
        case ..<128: 1
        case ..<16_384: 2
        case ..<2_097_152: 3
        default: 4
        }
    }

    private static func remainingLength(of message: OutgoingMessage, version: MQTTClientConfiguration.ProtocolVersion) -> Int {
        var length = 2 + message.topic.utf8.count + message.payload.count
        if version == .v5 {
            let properties = message.properties.contentType.map { 3 + $0.utf8.count } ?? 0
            length += variableByteIntegerSize(properties) + properties
        }
        return length
    }

    private static func appendString(_ text: String, to buffer: inout [UInt8]) {
        let count = text.utf8.count
        buffer.append(UInt8(count >> 8))
        buffer.append(UInt8(count & 0xFF))
        buffer.append(contentsOf: text.utf8)
    }
}
