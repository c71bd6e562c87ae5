/// What `bridge/state` carries: retained, QoS 1; the offline form is also the MQTT will.
public enum BridgeState: String, Sendable {
    case online, offline

    public func message(topics: TopicLayout) -> OutgoingMessageDescription {
        OutgoingMessageDescription(topic: topics.bridgeState, json: #"{"state":"\#(rawValue)"}"#)
    }
}

/// A retained QoS 1 JSON message, before the MQTT layer's type is chosen.
public struct OutgoingMessageDescription: Sendable, Equatable {
    public var topic: String
    public var json: String
}
