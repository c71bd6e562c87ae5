#if canImport(Glibc)
import Glibc
#endif

/// Keeps the durable spool's fdatasync off the data-path loop while keeping its promise: a durable message's
/// completion (`publishDurable` returning, the gateway's "stored") comes only after an fdatasync that covers it returned.
///
/// The loop appends and goes on at once; `SpoolDurability` decides when a sync starts (at once while someone waits,
/// else every 100 ms), the spool says what it covers (`makeSyncJob`), and `SpoolSyncWorker`'s thread runs it. When it
/// returns, the owner calls `collect()` on the loop: the covered waiters are answered and the next sync starts — the
/// records written meanwhile share it (group commit). A closed segment or one unlinked by `reclaim` while its sync
/// runs is safe: the job owns copies of the descriptors.
///
/// Not thread-safe: the loop that owns the spool owns this (the worker's handler only wakes that loop). It does not make
/// the commit point durable (see `SpoolSyncJob.commit`).
final class SpoolSync {
    typealias Completion = @Sendable (Result<Void, MQTTError>) -> Void

    let spool: DurableSpool
    private var durability: SpoolDurability<Completion>
    private let worker: SpoolSyncWorker
    private let sync: @Sendable (Int32) -> Int32
    private var closed = false

    /// `sync`: fdatasync; tests inject a slow one. `interval`: how often a sync runs that nobody waits for.
    init(spool: DurableSpool, interval: Duration = .milliseconds(100),
         sync: @escaping @Sendable (Int32) -> Int32 = { fdatasync($0) }) {
        self.spool = spool
        self.sync = sync
        durability = SpoolDurability(durable: spool.writtenSequence, interval: interval)
        worker = SpoolSyncWorker(name: "spool-sync", sync: sync)
    }

    deinit { worker.stop() }

    /// `handler` runs on the sync thread after each sync; it must get `collect()` called on the owning loop.
    func whenSyncReturns(_ handler: @escaping @Sendable () -> Void) { worker.whenJobReturns(handler) }

    /// Records written whose waiters are not answered yet.
    var waitingCount: Int { durability.waitingCount }
    /// Every record up to this sequence number is on disk.
    var durableSequence: UInt64 { durability.durable }

    /// Record `sequence` was appended: `completion` is answered once it is on disk (or the sync failed, or the spool
    /// closed first). A sync starts now unless one runs.
    func written(_ sequence: UInt64, completion: @escaping Completion) {
        guard !closed else { completion(.failure(.closed)); return }
        durability.written(sequence, waiter: completion)
        startIfDue()
    }

    /// Starts a sync when one is due: the loop's tick calls it for the commit point and unwaited records.
    func startIfDue(now: ContinuousClock.Instant = .now) {
        guard !closed, durability.shouldStartSync(spoolDirty: spool.needsSync, now: now) else { return }
        durability.syncStarted(covering: spool.writtenSequence, now: now)
        guard let job = spool.makeSyncJob() else {
            // Nothing unsynced: every record written is covered by a sync that already returned.
            answer(durability.syncFinished(succeeded: true), failure: nil)
            return
        }
        worker.submit(job)
    }

    /// On the loop, after the sync thread's handler: what reached the disk is answered and the next sync starts.
    func collect() {
        for outcome in worker.takeFinished() { finished(outcome) }
        startIfDue()
    }

    /// At shutdown, on the loop: waits for the sync in flight, makes everything durable in a last sync on this thread
    /// (the loop is ending; this wait is the price of exiting with everything on disk), answers every waiter and ends
    /// the sync thread.
    func close() {
        guard !closed else { return }
        closed = true
        worker.waitUntilIdle()
        for outcome in worker.takeFinished() { finished(outcome) }
        if spool.needsSync || durability.waitingCount > 0 {
            durability.syncStarted(covering: spool.writtenSequence, now: .now)
            if let job = spool.makeSyncJob() {
                finished(job.run(sync: sync))
            } else {
                answer(durability.syncFinished(succeeded: true), failure: nil)
            }
        }
        for completion in durability.close() { completion(.failure(.closed)) }
        worker.stop()
    }

    private func finished(_ outcome: SpoolSyncOutcome) {
        spool.syncFinished(outcome)
        answer(durability.syncFinished(succeeded: outcome.failure == nil), failure: outcome.failure)
    }

    private func answer(_ answers: [(waiter: Completion, stored: Bool)], failure: String?) {
        for (completion, stored) in answers {
            completion(stored ? .success(()) : .failure(.spoolIO("not on disk: \(failure ?? "sync failed")")))
        }
    }
}
