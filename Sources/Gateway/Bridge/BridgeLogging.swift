import FoundationEssentials
import MQTT
import Synchronization
import Wearables

/// Publishes the gateway's warnings and errors on `<base>/bridge/logging` (QoS 0, not retained) as
/// `{"level","message","logger","ts","metadata"?,"suppressed"?}`, through a `LogRateLimiter`, so a dashboard or an
/// automation sees what an operator would otherwise find only in the journal.
///
/// Records of the `mqtt` logger are left out: they are about the very link this would publish on (and a refused
/// publish would log again, in a loop).
public final class BridgeLogging: Sendable {
    private let topic: String
    private let sink: any MessageSink
    private let limiter = Mutex(LogRateLimiter())

    public init(topics: TopicLayout, sink: any MessageSink) {
        topic = topics.bridgeLogging
        self.sink = sink
    }

    public func publish(_ record: LogRecord) {
        guard record.level >= .warning, record.label != "mqtt",
              let suppressed = limiter.withLock({ $0.admit(atSeconds: Double(record.timestampMilliseconds) / 1000) })
        else { return }
        sink.publish(OutgoingMessage(topic: topic, payload: JSONWriter.encode(.object(Self.payload(record, suppressed: suppressed))),
                                     properties: MQTTProperties(contentType: "application/json")))
    }

    static func payload(_ record: LogRecord, suppressed: Int) -> [String: DeviceValue] {
        var payload: [String: DeviceValue] = [
            "level": .text(record.level.rawValue), "message": .text(record.message), "logger": .text(record.label),
            "ts": .integer(record.timestampMilliseconds),
        ]
        var metadata = record.metadata.mapValues { DeviceValue.text("\($0)") }
        if let error = record.error, metadata["error"] == nil { metadata["error"] = .text(error) }
        if !metadata.isEmpty { payload["metadata"] = .object(metadata) }
        if suppressed > 0 { payload["suppressed"] = .integer(Int64(suppressed)) }
        return payload
    }
}
