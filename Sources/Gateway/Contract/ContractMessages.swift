import MQTT
import Wearables

/// The contract's table of topics, retain flags and QoS in one place: each function returns the complete
/// message to hand to the MQTT client. Every payload carries content type `application/json` (sent with
/// MQTT 5 only).
///
/// Durability is the caller's: records go to `publishDurable`, everything else to `publish`.
public struct ContractMessages: Sendable {
    public let topics: TopicLayout

    public init(topics: TopicLayout) { self.topics = topics }

    // MARK: Devices

    /// `<id>/availability`, retained, QoS 1.
    public func availability(_ id: String, online: Bool) -> OutgoingMessage {
        message(topics.availability(id), DevicePayload.availability(online: online), qos: .atLeastOnce, retain: true)
    }

    /// `<id>`, retained, QoS 1.
    public func state(_ id: String, _ document: DeviceStateDocument) -> OutgoingMessage {
        message(topics.device(id), document.json, qos: .atLeastOnce, retain: true)
    }

    /// `<id>/sensor/<sensor>`: QoS 0, not retained, unless the device's options say otherwise.
    /// One sample on `topic` (`topics.sensor(id, sensor)`, which the caller may keep): the unbatched hot path.
    public func sample(_ sample: SensorSample, topic: String, qos: QoS = .atMostOnce, retain: Bool = false) -> OutgoingMessage {
        message(topic, SamplePayload.single(sample), qos: qos, retain: retain)
    }

    /// The same, written with `writer` (reset first), whose buffer the message shares: the sample path keeps one
    /// writer, so a payload costs no allocation once the previous message has been published.
    public func sample(_ sample: SensorSample, topic: String, qos: QoS, retain: Bool, writer: inout JSONWriter) -> OutgoingMessage {
        writer.reset()
        writer.sample(sample)
        return message(topic, writer.bytes, qos: qos, retain: retain)
    }

    public func samples(_ publication: SamplePublication, qos: QoS = .atMostOnce, retain: Bool = false) -> OutgoingMessage {
        message(topics.sensor(publication.device, publication.sensor), publication.payload, qos: qos, retain: retain)
    }

    /// `<id>/gesture`, QoS 1.
    public func gesture(_ id: String, name: String, timestamp: Int64) -> OutgoingMessage {
        message(topics.gesture(id), DevicePayload.gesture(name: name, timestamp: timestamp), qos: .atLeastOnce)
    }

    /// `<id>/event`, QoS 1.
    public func event(_ id: String, name: String, timestamp: Int64, details: [String: DeviceValue]) -> OutgoingMessage {
        message(topics.event(id), DevicePayload.event(name: name, timestamp: timestamp, details: details), qos: .atLeastOnce)
    }

    /// `<id>/fitness/<kind>`, QoS 1; publish it durably.
    public func record(_ id: String, _ record: FitnessRecord) -> OutgoingMessage {
        message(topics.fitness(id, kind: record.kind), DevicePayload.record(record), qos: .atLeastOnce)
    }

    /// Empty retained payloads that delete a removed device's state and availability from the broker.
    public func removal(_ id: String) -> [OutgoingMessage] {
        [topics.device(id), topics.availability(id)].map {
            OutgoingMessage(topic: $0, payload: [], qos: .atLeastOnce, retain: true)
        }
    }

    // MARK: Bridge

    /// `bridge/devices`, retained, QoS 1, each entry with its driver's `definition`.
    public func bridgeDevices(_ entries: [BridgeDeviceEntry], definitions: [String: DeviceValue] = [:]) -> OutgoingMessage {
        message(topics.bridgeDevices, BridgePayload.devices(entries, definitions: definitions), qos: .atLeastOnce, retain: true)
    }

    /// `bridge/event`, QoS 1, not retained.
    public func bridgeEvent(_ event: BridgeEvent) -> OutgoingMessage {
        message(topics.bridgeEvent, BridgePayload.event(event), qos: .atLeastOnce)
    }

    /// `bridge/health`, QoS 0, not retained: the next report replaces a lost one.
    public func health(_ report: HealthReport) -> OutgoingMessage {
        message(topics.bridgeHealth, BridgePayload.health(report), qos: .atMostOnce)
    }

    private func message(_ topic: String, _ payload: [UInt8], qos: QoS, retain: Bool = false) -> OutgoingMessage {
        OutgoingMessage(topic: topic, payload: payload, qos: qos, retain: retain,
                        properties: MQTTProperties(contentType: "application/json"))
    }
}
