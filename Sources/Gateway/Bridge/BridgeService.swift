import Foundation
import Logging
import MQTT
import ServiceLifecycle

/// The gateway's MQTT side for the service group: connects, announces `bridge/state` online and
/// `bridge/info` after every (re)connect, and on graceful shutdown publishes offline, flushes the durable
/// spool and disconnects cleanly (so the broker does not also send the will).
public struct BridgeService: Service {
    public let client: MQTTClient
    private let configuration: Configuration
    private let logger: Logger
    private let shutdownTimeout: Duration

    public init(configuration: Configuration, client: MQTTClient, logger: Logger,
                shutdownTimeout: Duration = .seconds(3)) {
        self.configuration = configuration
        self.client = client
        self.logger = logger
        self.shutdownTimeout = shutdownTimeout
    }

    public func run() async throws {
        let topics = BridgeTopics(base: configuration.mqtt.baseTopic)
        let client = client
        let info = OutgoingMessage(retainedJSON: OutgoingMessageDescription(topic: topics.info, json: bridgeInfoJSON()))
        client.onConnect {
            client.publish(OutgoingMessage(retainedJSON: BridgeState.online.message(topics: topics)))
            client.publish(info)
        }
        let offline = OutgoingMessage(retainedJSON: BridgeState.offline.message(topics: topics))
        let timeout = shutdownTimeout
        let logger = logger
        try await withGracefulShutdownHandler {
            try await client.run()
        } onGracefulShutdown: {
            logger.info("shutting down: publishing offline state and flushing the durable spool")
            client.requestClose(finalMessages: [offline], timeout: timeout)
        }
    }

    /// `bridge/info`: version, gateway id, adapters (none until the BlueZ layer exists) and the non-secret
    /// configuration summary.
    func bridgeInfoJSON() -> String {
        let document: [String: Any] = [
            "version": Wear2MQTTVersion.current,
            "gateway_id": configuration.gateway.id,
            "adapters": [Any](),
            "config": configuration.bridgeInfoSummary.mapValues(\.jsonValue),
        ]
        guard let data = try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return #"{"version":"\#(Wear2MQTTVersion.current)"}"#
        }
        return String(decoding: data, as: UTF8.self)
    }
}
