import Synchronization
import Wearables

/// Numbers the durable records queued for the spool and tells waiting drivers when a range of them is stored
/// (`DurableRecords`). Records are stored one at a time and in order (`GatewayCore.publishRecords`), so "stored up
/// to n" is one counter; the few that could not be stored are remembered by number.
final class DurableRecordTracker: Sendable {
    private struct Waiter {
        var after: UInt64
        var upTo: UInt64
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var queued: UInt64 = 0
        var done: UInt64 = 0
        /// Records that could not be stored (rare: a full or unwritable spool); the most recent 1,024.
        var failed: [UInt64] = []
        var waiters: [Waiter] = []
        /// The queue ended (shutdown): nothing more will be stored, waiters are answered at once.
        var ended = false
    }

    private let state = Mutex(State())

    /// A record was queued (its number is the new count).
    func queued() { state.withLock { $0.queued += 1 } }

    var queuedCount: UInt64 { state.withLock { $0.queued } }

    /// The oldest queued record was stored (`true`) or could not be (`false`).
    func finished(stored: Bool) {
        let ready = state.withLock { state -> [(CheckedContinuation<Bool, Never>, Bool)] in
            state.done += 1
            if !stored {
                state.failed.append(state.done)
                if state.failed.count > 1024 { state.failed.removeFirst(state.failed.count - 1024) }
            }
            return Self.take(&state)
        }
        for (continuation, result) in ready { continuation.resume(returning: result) }
    }

    /// Nothing more will be stored: every waiter learns whether its records were, those still queued count as not.
    func end() {
        let ready = state.withLock { state -> [(CheckedContinuation<Bool, Never>, Bool)] in
            state.ended = true
            return Self.take(&state)
        }
        for (continuation, result) in ready { continuation.resume(returning: result) }
    }

    /// Returns once records `(after, upTo]` are stored: true if every one was.
    func stored(after: UInt64, upTo: UInt64) async -> Bool {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> [(CheckedContinuation<Bool, Never>, Bool)] in
                state.waiters.append(Waiter(after: after, upTo: upTo, continuation: continuation))
                return Self.take(&state)
            }
            for (waiting, result) in ready { waiting.resume(returning: result) }
        }
    }

    var durableRecords: DurableRecords {
        DurableRecords(handedOver: { [self] in queuedCount }, stored: { [self] after, upTo in await stored(after: after, upTo: upTo) })
    }

    /// The waiters whose range is settled, with their answers; removed from the state.
    private static func take(_ state: inout State) -> [(CheckedContinuation<Bool, Never>, Bool)] {
        var ready: [(CheckedContinuation<Bool, Never>, Bool)] = []
        state.waiters.removeAll { waiter in
            let settled = state.done >= waiter.upTo || state.ended
            guard settled else { return false }
            let allStored = state.done >= waiter.upTo && !state.failed.contains { $0 > waiter.after && $0 <= waiter.upTo }
            ready.append((waiter.continuation, allStored))
            return true
        }
        return ready
    }
}
