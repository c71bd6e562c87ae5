/// Delivery guarantee of one MQTT message.
public enum QoS: Int, Sendable, Codable, Comparable {
    case atMostOnce = 0
    case atLeastOnce = 1
    case exactlyOnce = 2

    public static func < (lhs: QoS, rhs: QoS) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The MQTT 5 message properties wear2mqtt uses. With MQTT 3.1.1 they are not sent.
public struct MQTTProperties: Sendable, Equatable {
    public var responseTopic: String?
    public var correlationData: [UInt8]?
    public var contentType: String?
    /// Seconds the broker may keep the message for subscribers that are not connected.
    public var messageExpiryInterval: UInt32?
    public var userProperties: [(name: String, value: String)]

    public init(
        responseTopic: String? = nil,
        correlationData: [UInt8]? = nil,
        contentType: String? = nil,
        messageExpiryInterval: UInt32? = nil,
        userProperties: [(name: String, value: String)] = []
    ) {
        self.responseTopic = responseTopic
        self.correlationData = correlationData
        self.contentType = contentType
        self.messageExpiryInterval = messageExpiryInterval
        self.userProperties = userProperties
    }

    public var isEmpty: Bool {
        responseTopic == nil && correlationData == nil && contentType == nil
            && messageExpiryInterval == nil && userProperties.isEmpty
    }

    public static func == (lhs: MQTTProperties, rhs: MQTTProperties) -> Bool {
        lhs.responseTopic == rhs.responseTopic && lhs.correlationData == rhs.correlationData
            && lhs.contentType == rhs.contentType && lhs.messageExpiryInterval == rhs.messageExpiryInterval
            && lhs.userProperties.elementsEqual(rhs.userProperties) { $0.name == $1.name && $0.value == $1.value }
    }
}

/// A message the gateway publishes.
public struct OutgoingMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: QoS
    public var retain: Bool
    public var properties: MQTTProperties

    public init(topic: String, payload: [UInt8], qos: QoS = .atMostOnce, retain: Bool = false,
                properties: MQTTProperties = MQTTProperties()) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.properties = properties
    }

    public init(topic: String, text: String, qos: QoS = .atMostOnce, retain: Bool = false,
                properties: MQTTProperties = MQTTProperties()) {
        self.init(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain, properties: properties)
    }
}

/// A message the broker delivered to one of our subscriptions.
public struct IncomingMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: QoS
    public var retain: Bool
    public var properties: MQTTProperties
    /// The size of a payload over `maximumIncomingPayload`, which was not kept (`payload` is then empty); 0 otherwise.
    public var droppedPayloadBytes: Int

    public init(topic: String, payload: [UInt8], qos: QoS, retain: Bool, properties: MQTTProperties,
                droppedPayloadBytes: Int = 0) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.properties = properties
        self.droppedPayloadBytes = droppedPayloadBytes
    }

    /// What the message holds in memory while it waits, for the incoming buffer's byte bound.
    var bufferedBytes: Int { payload.count + topic.utf8.count + 64 }

    public var text: String { String(decoding: payload, as: UTF8.self) }
}

/// Topic rules of the MQTT specification, checked before a message is queued or spooled so that a bad
/// topic fails at the caller instead of poisoning the queue.
public enum TopicValidation {
    /// One pass over the UTF-8 bytes, a word at a time: this runs for every sample published (`String.contains`
    /// went through Foundation and was an eighth of the gateway's CPU at 20,000 samples/s).
    public static func isValidPublishTopic(_ topic: String) -> Bool {
        // Over the string's own contiguous bytes (every native string has them): stepping through `utf8` checks
        // an index per byte.
        topic.utf8.withContiguousStorageIfAvailable(isValidPublishTopic(utf8:))
            ?? Array(topic.utf8).withUnsafeBufferPointer(isValidPublishTopic(utf8:))
    }

    private static func isValidPublishTopic(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        !bytes.isEmpty && bytes.count <= 65_535
            && ByteWords.noByte(of: bytes, matchesWord: { word in
                ByteWords.hasByte(0, in: word) || ByteWords.hasByte(UInt8(ascii: "+"), in: word)
                    || ByteWords.hasByte(UInt8(ascii: "#"), in: word)
            }, orByte: { $0 == 0 || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") })
    }

    public static func isValidFilter(_ filter: String) -> Bool {
        guard !filter.isEmpty, filter.utf8.count <= 65_535, !filter.unicodeScalars.contains("\u{0}") else {
            return false
        }
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains("#") && (level != "#" || index != levels.count - 1) { return false }
            if level.contains("+") && level != "+" { return false }
        }
        return true
    }
}
