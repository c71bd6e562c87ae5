import Synchronization

/// One characteristic's notifications flowing to a handler: ended by the stack when the link drops (or the
/// characteristic goes away), or by its owner with `cancel()`.
///
/// It does not restart itself; `DeviceLink.runSession` in Wearables decides whether to subscribe again.
public final class NotificationSubscription: Sendable {
    private struct State {
        var ended = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
        var onCancel: (@Sendable () -> Void)?
    }

    private let state: Mutex<State>

    /// `onCancel` stops the delivery (closes the socket, calls StopNotify); it runs at most once, and not after the
    /// stack ended the subscription itself.
    public init(onCancel: @escaping @Sendable () -> Void) {
        state = Mutex(State(onCancel: onCancel))
    }

    public var isEnded: Bool { state.withLock { $0.ended } }

    /// Called by the stack when no more values will come.
    public func finish() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.ended else { return [] }
            state.ended = true
            state.onCancel = nil
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Stops the delivery; the subscription ends.
    public func cancel() {
        let onCancel = state.withLock { state -> (@Sendable () -> Void)? in
            defer { state.onCancel = nil }
            return state.onCancel
        }
        onCancel?()
        finish()
    }

    /// Returns when the subscription has ended, or at once when the task is cancelled.
    public func ended() async {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = state.withLock { state -> Bool in
                    if state.ended || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            // Only this waiter stops waiting; the subscription goes on.
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
