import EventLoop
import Synchronization

/// Whether a driver's session has finished setting up its connection (a vendor channel opened, a configuration
/// read back): a command that arrives in the first moments of a connection waits for that moment — woken by it, not
/// polling — rather than racing the setup. Its limit runs on the link's clock.
package final class ConnectionReadiness: Sendable {
    private struct State {
        var ready = false
        var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var next: UInt64 = 0
        /// Waits ended (limit, cancellation) before their continuation was registered.
        var ended: Set<UInt64> = []
    }

    private let state = Mutex(State())

    package init() {}

    /// The session is set up: every waiting command goes on.
    package func markReady() {
        let waiters = state.withLock { state in
            state.ready = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// The connection ended: commands wait for the next one's setup.
    package func reset() { state.withLock { $0.ready = false } }

    /// True at once when ready, or when it becomes ready within `limit` on `time`; false otherwise.
    package func wait(upTo limit: Duration, on time: TimeSource) async -> Bool {
        let id = state.withLock { state -> UInt64? in
            guard !state.ready else { return nil }
            state.next += 1
            return state.next
        }
        guard let id else { return true }
        // Unstructured: the limit's timer for a continuation; cancelled as soon as the wait ends.
        let timer = Task { [weak self] in
            guard (try? await time.sleep(for: limit)) != nil else { return }
            self?.end(id)
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let immediate = state.withLock { state -> Bool? in
                    if state.ready { return true }
                    if state.ended.remove(id) != nil { return false }
                    state.waiters[id] = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            end(id)
        }
    }

    private func end(_ id: UInt64) {
        state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard let waiter = state.waiters.removeValue(forKey: id) else {
                state.ended.insert(id)
                return nil
            }
            return waiter
        }?.resume(returning: false)
    }
}
