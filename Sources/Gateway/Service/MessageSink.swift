import MQTT

/// Where the gateway's messages go: the MQTT client in production, `RecordingSink` in the in-memory test kit.
/// The gateway never reads from it; requests come in through `GatewayCore.handle(_:)`.
public protocol MessageSink: Sendable {
    /// A message that may be lost (samples, state that is republished on reconnect). Never blocks.
    func publish(_ message: OutgoingMessage)
    /// A message that must not be lost (fitness and epoch records): stored when this returns.
    func publishDurable(_ message: OutgoingMessage) async throws(MQTTError)
    /// For `bridge/health`.
    var statistics: MQTTClientStatistics { get }
}

extension MQTTClient: MessageSink {}
