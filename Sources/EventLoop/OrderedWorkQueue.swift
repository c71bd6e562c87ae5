import Synchronization

/// Runs async work one item at a time, in the order it was enqueued, on one long-lived task reading an `AsyncStream`
/// — for effects that must not overtake each other (a release and a hold of the same device, a request and its
/// response on a device's control point, a device's commands), which a `Task {}` per item does not promise:
/// unstructured tasks start in no particular order. The one ordered queue of the codebase (docs/architecture.md,
/// "Concurrency").
///
/// Three ways in, all synchronous about their place in the line (taken when called, from any thread or actor):
/// - `enqueue`: fire and forget; never blocks.
/// - `run`: waits for the work's turn and its result; the work runs on the queue's task, so the caller's
///   cancellation does not reach it (a request/response exchange is never cut in half).
/// - `inTurn`: waits for its turn, then runs the body on the caller's own task (its actor, its cancellation) while
///   the items behind it wait.
///
/// An item that throws is reported to `failed` and the next runs; a slow item delays those behind it (that is the
/// point). The queue is unbounded and knows no priorities, deadlines or cancellation of single items.
public final class OrderedWorkQueue: Sendable {
    public typealias Work = @Sendable () async throws -> Void

    private let items: AsyncStream<Work>.Continuation
    private let ledger = Ledger()
    /// The queue's one task, reading the items in order; ended by `finish`, `cancel` or the queue's deinit.
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
        place(work) != nil
    }

    /// Runs `work` in its turn, behind everything enqueued before, and returns its result. The work runs on the
    /// queue's task: neither it nor the wait is cut short by the caller's cancellation. Once the queue was finished
    /// or cancelled (or when `cancel` drops it before its turn), `work` runs at once on the caller's task: there is no
    /// order left to keep.
    public func run<T: Sendable>(_ work: @escaping @Sendable () async -> T) async -> T {
        let outcome = Outcome<T>()
        if let position = place({
            let result = await work()
            outcome.value.withLock { $0 = result }
        }) {
            await ledger.wait(untilFinished: position)
            if let value = outcome.value.withLock({ $0 }) { return value }
        }
        return await work()
    }

    /// Waits until everything enqueued before has run, then runs `body` on the caller's task (in its isolation, under
    /// its cancellation) while what is enqueued after waits. The wait is not cut short by the caller's cancellation.
    /// Once the queue was finished or cancelled, `body` runs at once.
    public func inTurn<T, Failure: Error>(isolation: isolated (any Actor)? = #isolation,
                                          _ body: () async throws(Failure) -> T) async throws(Failure) -> T {
        // The caller's place: an item that holds the queue until the body has run.
        let (released, release) = AsyncStream.makeStream(of: Never.self)
        defer { release.finish() }
        if let position = place({ for await _ in released {} }) {
            await ledger.wait(untilFinished: position - 1)
        }
        return try await body()
    }

    /// Returns once every item enqueued before the call has run (or was dropped by `cancel`). Items enqueued
    /// meanwhile, by the items themselves among them, are not waited for. Not cut short by the caller's cancellation.
    public func drained() async {
        await ledger.wait(untilFinished: nil)
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

    /// Yields `work` and answers its position (1 for the first item ever), or nil when the queue takes no more.
    private func place(_ work: @escaping Work) -> UInt64? {
        // Counted and yielded under one lock, so the count matches the stream's order.
        ledger.counts.withLock { counts in
            guard counts.open, case .enqueued = items.yield(work) else { return nil }
            counts.enqueued += 1
            return counts.enqueued
        }
    }

    /// Items placed so far (enqueued, or taken by `run` and `inTurn`): lets a test see that a caller took its place
    /// without waiting on the clock.
    var placedCount: UInt64 { ledger.counts.withLock { $0.enqueued } }

    /// What a `run` item produced; nil while it has not run (or never will).
    private final class Outcome<T: Sendable>: Sendable {
        let value = Mutex<T?>(nil)
    }

    /// What was enqueued and what has run, shared by the callers and the queue's task.
    private final class Ledger: Sendable {
        struct Counts {
            var open = true
            var enqueued: UInt64 = 0
            /// Items run, or dropped at the end. Items run in order, so the first `finished` items are done.
            var finished: UInt64 = 0
            /// Callers waiting until `finished` reaches their count.
            var waiters: [(count: UInt64, waiter: CheckedContinuation<Void, Never>)] = []
        }

        let counts = Mutex(Counts())

        func close() { counts.withLock { $0.open = false } }

        /// Returns once the first `count` items have run or were dropped (nil: those enqueued so far).
        func wait(untilFinished count: UInt64?) async {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let now = counts.withLock { counts -> Bool in
                    let count = count ?? counts.enqueued
                    guard counts.finished < count else { return true }
                    counts.waiters.append((count, waiter))
                    return false
                }
                if now { waiter.resume() }
            }
        }

        func finishedOne() {
            let ready = counts.withLock { counts in
                counts.finished += 1
                let finished = counts.finished
                // Not sorted: a `run` or `inTurn` registers its count after placing its item, so a later `drained`
                // may register first.
                let due = counts.waiters.filter { $0.count <= finished }
                counts.waiters.removeAll { $0.count <= finished }
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
