import Synchronization

/// Runs async work one item at a time, in the order it was enqueued, on one long-lived task reading an `AsyncStream`
/// — for effects that must not overtake each other (a release and a hold of the same device), which a `Task {}` per
/// item does not promise: unstructured tasks start in no particular order.
///
/// `enqueue` is synchronous and never blocks, from any thread. An item that throws is reported to `failed` and the
/// next runs; a slow item delays those behind it (that is the point). The queue is unbounded and knows no priorities,
/// deadlines or cancellation of single items.
public final class OrderedWorkQueue: Sendable {
    public typealias Work = @Sendable () async throws -> Void

    private let items: AsyncStream<Work>.Continuation
    private let ledger = Ledger()
    private let runner: Task<Void, Never>

    /// `failed`: called (on the queue's task) with what an item threw.
    public init(failed: @escaping @Sendable (any Error) -> Void = { _ in }) {
        let (stream, items) = AsyncStream.makeStream(of: Work.self)
        self.items = items
        runner = Task { [ledger] in
            for await work in stream {
                // Cancelled (`cancel`): what is still buffered is dropped, not run.
                guard !Task.isCancelled else { break }
                do { try await work() } catch { failed(error) }
                ledger.finishedOne()
            }
            ledger.ended()
        }
    }

    /// Without an owner nothing can enqueue: what is queued still runs, then the task ends.
    deinit { items.finish() }

    /// Queues `work` behind everything enqueued before; false (and `work` never runs) once the queue was finished or
    /// cancelled.
    @discardableResult
    public func enqueue(_ work: @escaping Work) -> Bool {
        // Counted and yielded under one lock, so the count matches the stream's order for `drained`.
        ledger.counts.withLock { counts in
            guard counts.open, case .enqueued = items.yield(work) else { return false }
            counts.enqueued += 1
            return true
        }
    }

    /// Returns once every item enqueued before the call has run (or was dropped by `cancel`). Items enqueued
    /// meanwhile, by the items themselves among them, are not waited for. Not cut short by the caller's cancellation.
    public func drained() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let now = ledger.counts.withLock { counts -> Bool in
                guard counts.finished < counts.enqueued else { return true }
                counts.waiters.append((counts.enqueued, waiter))
                return false
            }
            if now { waiter.resume() }
        }
    }

    /// Takes no more work; what is queued still runs, and this returns once it has.
    public func finish() async {
        ledger.close()
        items.finish()
        await runner.value
    }

    /// Takes no more work, cancels the item running (its task is the queue's) and drops those queued behind it.
    /// Returns at once; `drained()` returns once the running item has.
    public func cancel() {
        ledger.close()
        items.finish()
        runner.cancel()
    }

    /// What was enqueued and what has run, shared by the callers and the queue's task.
    private final class Ledger: Sendable {
        struct Counts {
            var open = true
            var enqueued: UInt64 = 0
            /// Items run, or dropped at the end.
            var finished: UInt64 = 0
            /// `drained()` callers with the count they wait for, in the order of their counts.
            var waiters: [(count: UInt64, waiter: CheckedContinuation<Void, Never>)] = []
        }

        let counts = Mutex(Counts())

        func close() { counts.withLock { $0.open = false } }

        func finishedOne() {
            let ready = counts.withLock { counts in
                counts.finished += 1
                let finished = counts.finished
                let due = counts.waiters.prefix { $0.count <= finished }
                counts.waiters.removeFirst(due.count)
                return due.map(\.waiter)
            }
            for waiter in ready { waiter.resume() }
        }

        /// The queue's task ended: whatever is still counted as queued will never run.
        func ended() {
            let ready = counts.withLock { counts in
                counts.open = false
                counts.finished = counts.enqueued
                defer { counts.waiters = [] }
                return counts.waiters.map(\.waiter)
            }
            for waiter in ready { waiter.resume() }
        }
    }
}
