import MQTT

/// Where the gateway's messages go: the MQTT client in production, `RecordingSink` in the in-memory test kit.
/// The gateway never reads from it; requests come in through `GatewayCore.handle(_:)`.
public protocol MessageSink: Sendable {
    /// A message that may be lost (samples, state that is republished on reconnect). Never blocks.
    func publish(_ message: OutgoingMessage)
    /// A message that must not be lost (fitness and epoch records), taken in the order of the calls without waiting:
    /// `whenStored` is called once it is stored (on disk) or could not be. Callers hand over the next record at once,
    /// so records written while a sync runs share the next one.
    func publishDurable(_ message: OutgoingMessage, whenStored: @escaping @Sendable (Result<Void, MQTTError>) -> Void)
    /// For `bridge/health`.
    var statistics: MQTTClientStatistics { get }
}

extension MQTTClient: MessageSink {}
