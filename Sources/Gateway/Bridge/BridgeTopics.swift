/// The bridge's own topics under `mqtt.base_topic` (../shared/design/mqtt-api.md, "Bridge").
public struct BridgeTopics: Sendable {
    public let base: String

    public init(base: String) { self.base = base }

    public var state: String { "\(base)/bridge/state" }
    public var info: String { "\(base)/bridge/info" }
    public var devices: String { "\(base)/bridge/devices" }
    public var event: String { "\(base)/bridge/event" }
    public var health: String { "\(base)/bridge/health" }
}

/// What `bridge/state` carries: retained, QoS 1; the offline form is also the MQTT will.
public enum BridgeState: String, Sendable {
    case online, offline

    public func message(topics: BridgeTopics) -> OutgoingMessageDescription {
        OutgoingMessageDescription(topic: topics.state, json: #"{"state":"\#(rawValue)"}"#)
    }
}

/// A retained QoS 1 JSON message, before the MQTT layer's type is chosen; keeps topic building free of
/// the transport.
public struct OutgoingMessageDescription: Sendable, Equatable {
    public var topic: String
    public var json: String
}
