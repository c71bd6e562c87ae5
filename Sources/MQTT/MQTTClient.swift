import EventLoop
import Logging
import Synchronization

/// wear2mqtt's MQTT client: libmosquitto underneath, with reconnecting, resubscribing, an in-memory ring for
/// non-durable messages and an on-disk spool for durable ones while the broker is away.
///
/// Use: register `onConnect` hooks (they republish retained state after every reconnect), call `run()` in a
/// task for the client's lifetime, publish and subscribe from anywhere, and `close(finalMessages:timeout:)`
/// to end. `run()` throws only what retrying cannot fix (credentials refused, TLS failure on the first
/// attempt); a broker that is away is retried forever.
public final class MQTTClient: Sendable {
    public let configuration: MQTTClientConfiguration
    /// Messages arriving on our subscriptions. One consumer.
    public let messages: IncomingMessages

    private let connection: MosquittoConnection
    private let events: AsyncStream<ConnectionEvent>
    private let hooks = Mutex<[@Sendable () async -> Void]>([])
    private let started = Mutex(false)
    private let logger: Logger

    /// `loop`: the event loop to run on (the daemon's data-path loop, so a sample decoded there is published
    /// without a hand-off); nil runs the client on a loop of its own.
    public init(configuration: MQTTClientConfiguration, logger: Logger = Logger(label: "mqtt"),
                loop: EventLoop? = nil) throws(MQTTError) {
        if let will = configuration.will, !TopicValidation.isValidPublishTopic(will.topic) {
            throw .invalidTopic(will.topic)
        }
        self.configuration = configuration
        self.logger = logger
        let (events, eventContinuation) = AsyncStream.makeStream(of: ConnectionEvent.self)
        // Reading pauses at the capacity (`IncomingFlow`); what one read already took in still fits, however much:
        // libmosquitto reads as many packets in one call as it has messages queued either way, thousands while
        // answers wait for their PUBACKs. The bound that drops is `IncomingFlow.hasRoom(for:)`, in bytes and count.
        let (messages, messageContinuation) = AsyncStream.makeStream(of: IncomingMessage.self, bufferingPolicy: .unbounded)
        let flow = IncomingFlow(capacity: configuration.incomingBufferCapacity, byteCapacity: configuration.incomingBufferBytes)
        self.events = events
        self.messages = IncomingMessages(stream: messages, flow: flow)
        connection = try MosquittoConnection(configuration: configuration, logger: logger, loop: loop,
                                             events: eventContinuation, incoming: messageContinuation, flow: flow)
    }

    /// Called after every successful connection, the first included, in registration order.
    public func onConnect(_ hook: @escaping @Sendable () async -> Void) {
        hooks.withLock { $0.append(hook) }
    }

    /// Connects and keeps the connection until `close` completes. Throws `authenticationRefused` or
    /// `tlsFailure` when the broker refuses us in a way no retry can fix.
    public func run() async throws(MQTTError) {
        let first = started.withLock { value in defer { value = true }; return !value }
        guard first else { return }
        connection.start()
        for await event in events {
            switch event {
            case .connected:
                for hook in hooks.withLock({ $0 }) { await hook() }
            case .disconnected:
                break
            case .fatal(let error):
                throw error
            case .closed:
                return
            }
        }
    }

    /// Publishes a message that may be lost: QoS 0 samples, state that is republished on reconnect. While the
    /// broker is away it waits in the bounded ring (oldest dropped first). Never blocks.
    public func publish(_ message: OutgoingMessage) {
        guard TopicValidation.isValidPublishTopic(message.topic) else {
            logger.error("not publishing to an invalid topic", metadata: ["topic": "\(message.topic)"])
            return
        }
        connection.send(.publish(message))
    }

    /// Publishes a message that must not be lost (fitness and epoch records): it is on disk when this returns (an
    /// fdatasync covering it returned, on the spool's own thread, so the loop never waits for the disk) and stays there
    /// until the broker acknowledged it, across reconnects and restarts. QoS is at least 1.
    public func publishDurable(_ message: OutgoingMessage) async throws(MQTTError) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, MQTTError>, Never>) in
            publishDurable(message, whenStored: { continuation.resume(returning: $0) })
        }
        try result.get()
    }

    /// `publishDurable` without waiting: messages are spooled in the order of the calls, and `whenStored` is called
    /// (on the MQTT loop, so it must not block) once the message is on disk or could not be stored.
    public func publishDurable(_ message: OutgoingMessage,
                               whenStored: @escaping @Sendable (Result<Void, MQTTError>) -> Void) {
        guard TopicValidation.isValidPublishTopic(message.topic) else { whenStored(.failure(.invalidTopic(message.topic))); return }
        connection.send(.publishDurable(message, completion: whenStored))
    }

    /// Subscribes now if connected and again after every reconnect.
    /// `retainAsPublished`: with MQTT 5, a message published retained arrives with its retain flag set even while
    /// the subscription is live (not only from the broker's store at subscribe time), so a retained request can be
    /// told apart from a plain one whenever it comes.
    public func subscribe(_ filter: String, qos: QoS = .atLeastOnce, retainAsPublished: Bool = false) throws(MQTTError) {
        guard TopicValidation.isValidFilter(filter) else { throw .invalidTopic(filter) }
        connection.send(.subscribe(filter: filter, qos: qos, retainAsPublished: retainAsPublished))
    }

    public func unsubscribe(_ filter: String) {
        connection.send(.unsubscribe(filter: filter))
    }

    /// Publishes `finalMessages` (such as `bridge/state` offline), waits until they and the durable spool are
    /// acknowledged or `timeout` passes, then disconnects cleanly so the broker discards the will. What was not
    /// acknowledged stays in the spool for the next start.
    public func close(finalMessages: [OutgoingMessage] = [], timeout: Duration = .seconds(4)) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            requestClose(finalMessages: finalMessages, timeout: timeout) { continuation.resume() }
        }
    }

    /// The non-waiting form of `close`, for places that cannot await (a graceful-shutdown handler).
    public func requestClose(finalMessages: [OutgoingMessage] = [], timeout: Duration = .seconds(4),
                             completion: @escaping @Sendable () -> Void = {}) {
        let neverStarted = started.withLock { value in defer { value = true }; return !value }
        if neverStarted { connection.start() }
        connection.send(.close(finalMessages: finalMessages, timeout: timeout, completion: completion))
    }

    public var statistics: MQTTClientStatistics { connection.statistics.withLock { $0 } }
}
