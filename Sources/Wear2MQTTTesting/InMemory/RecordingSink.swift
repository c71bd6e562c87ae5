import Gateway
import MQTT
import Synchronization

/// A `MessageSink` that keeps every message, in order, as a broker with a subscriber on `#` would see them;
/// retained ones also as the broker would hold them (an empty payload deletes).
public final class RecordingSink: MessageSink {
    private struct State {
        var published: [OutgoingMessage] = []
        var retained: [String: OutgoingMessage] = [:]
        var durable: [OutgoingMessage] = []
        var connected = true
        var forward: (@Sendable (OutgoingMessage) -> Void)?
    }

    private let state = Mutex(State())
    /// Told of every message recorded: what `until` waits on.
    public let changes = ChangeNotifier()

    public init() {}

    public func publish(_ message: OutgoingMessage) {
        let forward = state.withLock { state in
            state.published.append(message)
            if message.retain { state.retained[message.topic] = message.payload.isEmpty ? nil : message }
            return state.forward
        }
        changes.changed()
        forward?(message)
    }

    public func publishDurable(_ message: OutgoingMessage,
                               whenStored: @escaping @Sendable (Result<Void, MQTTError>) -> Void) {
        let forward = state.withLock { state in
            state.durable.append(message)
            state.published.append(message)
            return state.forward
        }
        changes.changed()
        forward?(message)
        whenStored(.success(()))
    }

    /// Hands every message, after recording it, to `forward` as well: a broker shared by several gateways
    /// (`InMemorySite`).
    public func forwardPublications(_ forward: @escaping @Sendable (OutgoingMessage) -> Void) {
        state.withLock { $0.forward = forward }
    }

    public var statistics: MQTTClientStatistics {
        var statistics = MQTTClientStatistics()
        statistics.connected = state.withLock { $0.connected }
        statistics.published = UInt64(state.withLock { $0.published.count })
        return statistics
    }

    /// Whether the broker link counts as up (`statistics.connected`); messages are still recorded either way, as the
    /// client would queue them.
    public var connected: Bool {
        get { state.withLock { $0.connected } }
        set { state.withLock { $0.connected = newValue } }
    }

    /// Every message, durable ones included, in the order they were handed over.
    public var messages: [OutgoingMessage] { state.withLock { $0.published } }

    public func messages(on topic: String) -> [OutgoingMessage] { messages.filter { $0.topic == topic } }

    /// What the broker would hold retained on `topic` now.
    public func retained(_ topic: String) -> OutgoingMessage? { state.withLock { $0.retained[topic] } }

    /// Whether `topic` was ever published retained and is deleted now.
    public func wasCleared(_ topic: String) -> Bool {
        state.withLock { state in
            state.retained[topic] == nil && state.published.contains { $0.topic == topic && $0.retain && $0.payload.isEmpty }
        }
    }

    /// Returns true as soon as `condition` holds, re-checked on every message recorded; false if it still does not
    /// after `timeout` (a failure guard in real time).
    public func until(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async rethrows -> Bool {
        try await changes.until(timeout: timeout, condition)
    }

    public var durableMessages: [OutgoingMessage] { state.withLock { $0.durable } }
}
