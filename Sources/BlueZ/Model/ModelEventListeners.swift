import Synchronization

/// Who listens to a central's model events: each `stream()` gets every event announced after it was made, until the
/// listener stops iterating. For the centrals that build their model themselves (a proxy's, the radio set, the
/// in-memory one); `BlueZClient` keeps its listeners under its model's lock instead.
public final class ModelEventListeners: Sendable {
    private let listeners = Mutex<(next: UInt64, all: [UInt64: AsyncStream<BlueZModelEvent>.Continuation])>((0, [:]))

    public init() {}

    public func stream() -> AsyncStream<BlueZModelEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: BlueZModelEvent.self)
        let id = listeners.withLock { state -> UInt64 in
            state.next += 1
            state.all[state.next] = continuation
            return state.next
        }
        continuation.onTermination = { [weak self] _ in _ = self?.listeners.withLock { $0.all.removeValue(forKey: id) } }
        return stream
    }

    /// `events`, in order, to every listener.
    public func announce(_ events: [BlueZModelEvent]) {
        guard !events.isEmpty else { return }
        let all = listeners.withLock { Array($0.all.values) }
        for event in events { for listener in all { listener.yield(event) } }
    }
}
