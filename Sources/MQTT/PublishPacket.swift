/// A QoS 0 PUBLISH packet that is not retained and carries at most a content type: the shape of every sample.
/// `MosquittoConnection` writes these itself, all of an iteration's in one `send` (docs/decisions.md, "Samples are
/// written past libmosquitto"); anything else goes through libmosquitto.
///
/// MQTT 3.1.1 §3.3 and MQTT 5.0 §3.3: a fixed header (type 3, no flags), the remaining length as a variable byte
/// integer (§1.5.5 / §2.2.3), the topic as a UTF-8 string with a two-byte length, with MQTT 5 the properties'
/// length and the properties (content type, identifier 3, a UTF-8 string), then the payload. No packet identifier
/// at QoS 0. MQTT 3.1.1 has no properties: the content type is not sent, as libmosquitto does not send it either.
public struct PublishPacket {
    /// The largest remaining length MQTT can express (four bytes of variable byte integer).
    public static let maximumRemainingLength = 268_435_455

    // What it writes, not the whole message: a copy of that retains every property too.
    private let topic: String
    private let contentType: String?
    private let payload: [UInt8]
    private let hasProperties: Bool
    private let remainingLength: Int

    /// Nil when `message` does not have this shape (QoS above 0, retained, other properties, a topic over 65,535
    /// bytes, a packet over MQTT's largest): libmosquitto must send it. Topic and content type must be printable
    /// ASCII, as every topic of the contract is: a broker closes the connection of a client that sends a control
    /// character or a Unicode non-character (mosquitto does), which libmosquitto's own check refuses before sending.
    public init?(_ message: borrowing OutgoingMessage, version: MQTTClientConfiguration.ProtocolVersion) {
        // `message` borrowed (an initializer takes its arguments owned, so the caller copied the message for every
        // sample), and `message.properties` read in place each time: a local copy of it retained everything it holds.
        guard message.qos == .atMostOnce, !message.retain, Self.isPrintableASCII(message.topic),
              message.properties.responseTopic == nil, message.properties.correlationData == nil,
              message.properties.messageExpiryInterval == nil, message.properties.userProperties.isEmpty,
              message.properties.contentType.map(Self.isPrintableASCII) ?? true else { return nil }
        var remaining = 2 + message.topic.utf8.count + message.payload.count
        if version == .v5 {
            let propertiesLength = message.properties.contentType.map { 3 + $0.utf8.count } ?? 0
            remaining += Self.variableByteIntegerSize(propertiesLength) + propertiesLength
        }
        guard remaining <= Self.maximumRemainingLength else { return nil }
        topic = message.topic
        contentType = message.properties.contentType
        payload = message.payload
        hasProperties = version == .v5
        remainingLength = remaining
    }

    /// The packet's size in bytes.
    public var size: Int { 1 + Self.variableByteIntegerSize(remainingLength) + remainingLength }

    /// The whole packet is laid out in scratch space and appended at once: an `append` a field checked the buffer's
    /// uniqueness and capacity a dozen times a sample.
    public func append(to buffer: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: size) { space in
            var packet = Cursor(space.baseAddress!)
            packet.put(0x30)
            packet.put(variableByteInteger: remainingLength)
            packet.put(string: topic)
            if hasProperties {
                if let contentType {
                    packet.put(variableByteInteger: 3 + contentType.utf8.count)
                    packet.put(0x03)
                    packet.put(string: contentType)
                } else {
                    packet.put(0)
                }
            }
            payload.withUnsafeBufferPointer { packet.put($0) }
            buffer.append(contentsOf: UnsafeBufferPointer(start: space.baseAddress, count: packet.offset))
        }
    }

    /// §1.5.5: seven bits a byte, least significant first, the top bit set on every byte but the last.
    public static func appendVariableByteInteger(_ value: Int, to buffer: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4) { space in
            var bytes = Cursor(space.baseAddress!)
            bytes.put(variableByteInteger: value)
            buffer.append(contentsOf: UnsafeBufferPointer(start: space.baseAddress, count: bytes.offset))
        }
    }

    /// Writes a packet's fields one after the other into space the caller sized.
    private struct Cursor {
        private let base: UnsafeMutablePointer<UInt8>
        private(set) var offset = 0

        init(_ base: UnsafeMutablePointer<UInt8>) { self.base = base }

        mutating func put(_ byte: UInt8) {
            base[offset] = byte
            offset += 1
        }

        mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let source = bytes.baseAddress else { return }
            (base + offset).update(from: source, count: bytes.count)
            offset += bytes.count
        }

        mutating func put(variableByteInteger value: Int) {
            precondition(value >= 0 && value <= maximumRemainingLength, "not a variable byte integer: \(value)")
            var rest = value
            repeat {
                let digit = UInt8(rest & 0x7F)
                rest >>= 7
                put(rest > 0 ? digit | 0x80 : digit)
            } while rest > 0
        }

        /// A UTF-8 string: its two-byte length, then its bytes (the string's own, where it has them contiguous).
        mutating func put(string text: String) {
            let count = text.utf8.count
            put(UInt8(count >> 8))
            put(UInt8(count & 0xFF))
            if text.utf8.withContiguousStorageIfAvailable({ put($0) }) == nil {
                Array(text.utf8).withUnsafeBufferPointer { put($0) }
            }
        }
    }

    static func variableByteIntegerSize(_ value: Int) -> Int {
        switch value {
        case ..<128: 1
        case ..<16_384: 2
        case ..<2_097_152: 3
        default: 4
        }
    }

    /// Printable ASCII, and short enough for a UTF-8 string's two-byte length.
    static func isPrintableASCII(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable(isPrintableASCII(utf8:))
            ?? Array(text.utf8).withUnsafeBufferPointer(isPrintableASCII(utf8:))
    }

    private static func isPrintableASCII(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.count <= Int(UInt16.max)
            && ByteWords.noByte(of: bytes, matchesWord: { word in
                ByteWords.hasByte(below: 0x20, in: word) || ByteWords.hasByte(above: 0x7E, in: word)
            }, orByte: { $0 < 0x20 || $0 > 0x7E })
    }
}
