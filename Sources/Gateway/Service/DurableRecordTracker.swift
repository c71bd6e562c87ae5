import Synchronization
import Wearables

/// Numbers the durable records queued for the spool and tells waiting drivers when a range of them is stored
/// (`DurableRecords`). Records are handed to the spool in order and mostly settle in order (a sync covers a prefix), so
/// "settled up to n" is one counter, with the few that settle early (a record the spool refused at once) held aside
/// until the ones before them settle; the few that could not be stored are remembered by number.
final class DurableRecordTracker: Sendable {
    private struct Waiter {
        var after: UInt64
        var upTo: UInt64
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var queued: UInt64 = 0
        /// Every record up to this number is settled (stored or not).
        var done: UInt64 = 0
        /// Records above `done` already settled, waiting for the ones before them.
        var settledAhead: Set<UInt64> = []
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

    /// Record `number` (counted from 1 in the order queued) was stored (`true`) or could not be (`false`).
    func finished(_ number: UInt64, stored: Bool) {
        let ready = state.withLock { state -> [(CheckedContinuation<Bool, Never>, Bool)] in
            guard number > state.done, !state.settledAhead.contains(number) else { return [] }
            if !stored {
                state.failed.append(number)
                if state.failed.count > 1024 { state.failed.removeFirst(state.failed.count - 1024) }
            }
            state.settledAhead.insert(number)
            while state.settledAhead.remove(state.done + 1) != nil { state.done += 1 }
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
