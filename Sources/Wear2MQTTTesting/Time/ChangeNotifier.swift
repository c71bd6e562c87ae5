import Synchronization

/// Wakes every waiting test when something it watches changes (a message recorded, a simulated device written, a
/// subscriber's output grown): `until` re-checks its condition on each change instead of polling on a timer.
public final class ChangeNotifier: Sendable {
    private struct State {
        var version: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextID: UInt64 = 0
        /// Waits ended (deadline, cancellation) before their continuation was registered.
        var ended: Set<UInt64> = []
        var forwards: [ChangeNotifier] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// Something changed: every waiter re-checks its condition.
    public func changed() {
        let (waiters, forwards) = state.withLock { state in
            state.version &+= 1
            defer { state.waiters = [:] }
            return (Array(state.waiters.values), state.forwards)
        }
        for waiter in waiters { waiter.resume() }
        for forward in forwards { forward.changed() }
    }

    /// Tells `other` of every change too: one wait on several sources (a gateway's messages and its devices).
    public func forward(to other: ChangeNotifier) {
        state.withLock { $0.forwards.append(other) }
    }

    /// Returns true as soon as `condition` holds, checked now and after every change; false if it still does not
    /// after `timeout`. The timeout is a failure guard in real time, never what the test waits for: a passing wait
    /// ends at the change that made the condition true.
    public func until(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            let seen = state.withLock { $0.version }
            if try await condition() { return true }
            guard ContinuousClock.now < deadline else { return false }
            await change(after: seen, deadline: deadline)
        }
    }

    /// Returns once nothing has changed for `interval` (real time), or after `limit` all the same. What a test waits
    /// for before it moves a manual clock on: the work the last move set going has run to its next wait. Each change
    /// wakes it and starts the quiet interval again; only an interval without one ends it.
    public func quiet(for interval: Duration, atMost limit: Duration) async {
        let end = ContinuousClock.now + limit
        while !Task.isCancelled {
            let seen = state.withLock { $0.version }
            let now = ContinuousClock.now
            guard now < end else { return }
            await change(after: seen, deadline: min(now + interval, end))
            if state.withLock({ $0.version }) == seen { return }
        }
    }

    /// Returns after the first change past `version`, at `deadline`, or when the task is cancelled.
    private func change(after version: UInt64, deadline: ContinuousClock.Instant) async {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        // Unstructured: the deadline's timer for a continuation; cancelled as soon as the change comes.
        let timer = Task { [weak self] in
            guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
            self?.wake(id)
        }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waiting = state.withLock { state -> Bool in
                    guard state.ended.remove(id) == nil, state.version == version, ContinuousClock.now < deadline else { return false }
                    state.waiters[id] = continuation
                    return true
                }
                if !waiting { continuation.resume() }
            }
        } onCancel: {
            wake(id)
        }
    }

    private func wake(_ id: UInt64) {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiters.removeValue(forKey: id) else {
                state.ended.insert(id)
                return nil
            }
            return waiter
        }?.resume()
    }
}
