import EventLoop
import Synchronization

/// Lets a command wait for the device to notify a value (a new configuration) that a session task receives.
///
/// A waiter registers before the write that should cause the notification, so a device that answers before
/// BlueZ returns the write's reply is not missed.
final class NotificationWaiters<Value: Sendable>: Sendable {
    private let waiters = Mutex<(next: Int, continuations: [Int: AsyncStream<Value>.Continuation])>((0, [:]))

    /// What the device did within the time allowed.
    enum Outcome {
        case confirmed(Value)
        /// It notified, but never the value asked for; the last one it sent.
        case differs(Value)
        case silent
    }

    func deliver(_ value: Value) {
        for continuation in waiters.withLock({ Array($0.continuations.values) }) { continuation.yield(value) }
    }

    /// Registers, runs `trigger`, then waits up to `timeout` (on `time`) for a value that `matches`.
    func wait<Failure: Error>(timeout: Duration, on time: TimeSource, matches: @escaping @Sendable (Value) -> Bool,
                              after trigger: () async throws(Failure) -> Void) async throws(Failure) -> Outcome {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self)
        let id = waiters.withLock { state in
            defer { state.next += 1 }
            state.continuations[state.next] = continuation
            return state.next
        }
        defer {
            waiters.withLock { _ = $0.continuations.removeValue(forKey: id) }
            continuation.finish()
        }
        try await trigger()
        return await withTaskGroup(of: Outcome?.self) { group in
            group.addTask {
                var last: Value?
                for await value in stream {
                    if matches(value) { return .confirmed(value) }
                    last = value
                }
                return last.map { .differs($0) } ?? .silent
            }
            group.addTask {
                try? await time.sleep(for: timeout)
                return nil
            }
            // The timer ends first unless a match arrives; finishing the stream then hands back the last value.
            let first = await group.next() ?? nil
            if let first { group.cancelAll(); return first }
            continuation.finish()
            return (await group.next() ?? nil) ?? .silent
        }
    }
}
