import EventLoop
import Synchronization

/// Wakes one waiting task, or the next one to wait: how a device session sleeps out its reconnect backoff (or a
/// hold) and is woken at once by `connect`, the end of an update or a change of its link — no polling.
///
/// A signal with nobody waiting is kept for the next `wait`, so a wake between two waits is never lost. One task
/// waits at a time (the session's own loop).
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: (id: UInt64, continuation: CheckedContinuation<Bool, Never>)?
        /// The current wait; a wait whose id is no longer current ends as soon as it parks.
        var current: UInt64 = 0
    }
    private let state = Mutex(State())
    private let time: TimeSource

    init(time: TimeSource) { self.time = time }

    /// Wakes the waiting task, or the next one to call `wait`.
    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume(returning: true)
    }

    /// Returns when signalled, at `deadline` (nil: only when signalled), or when the task is cancelled.
    /// - Returns: whether a signal ended the wait.
    @discardableResult
    func wait(until deadline: ContinuousClock.Instant?) async -> Bool {
        let id = state.withLock { state -> UInt64? in
            if state.pending {
                state.pending = false
                return nil
            }
            state.current &+= 1
            return state.current
        }
        guard let id else { return true }
        let timer = deadline.map { deadline in
            // Unstructured: a waiter's deadline timer inside a continuation; cancelled when the signal comes first.
            Task { [weak self] in
                try? await self?.time.sleep(until: deadline)
                self?.end(id)
            }
        }
        defer { timer?.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let immediate = state.withLock { state -> Bool? in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    if state.current != id || Task.isCancelled { return false }
                    state.waiter = (id, continuation)
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            end(id)
        }
    }

    /// Ends wait `id` without a signal (its deadline passed, or its task was cancelled).
    private func end(_ id: UInt64) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard let waiter = state.waiter, waiter.id == id else {
                if state.current == id { state.current &+= 1 }
                return nil
            }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume(returning: false)
    }
}
