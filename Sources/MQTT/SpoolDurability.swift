/// Where the durable spool's records stand between written and on disk, and when the next fdatasync starts: the
/// decisions of `SpoolSync` without its thread or files (tested on their own in `SpoolDurabilityTests`).
///
/// A record is written to its segment on the loop at once; an fdatasync covering it runs later on the spool's sync
/// thread, one at a time. A waiter (a `publishDurable` awaiting its record) is answered only when a sync that started
/// after its record was written has returned, so a record is never reported stored before it is on disk. It does not
/// know what a sync touches (the spool's `makeSyncJob` does) nor how long it takes.
struct SpoolDurability<Waiter> {
    /// Every record up to this sequence number is on disk (an fdatasync covering it returned).
    private(set) var durable: UInt64
    /// The sync in flight covers records up to this sequence number; nil while none runs.
    private(set) var syncing: UInt64?
    /// How often a sync runs for what nobody waits for (the commit point, records written before a restart).
    let interval: Duration
    private var lastSyncStarted: ContinuousClock.Instant?
    /// Waiters with their record's sequence number, ascending: records are written in order.
    private var waiters: [(sequence: UInt64, waiter: Waiter)] = []

    init(durable: UInt64, interval: Duration = .milliseconds(100)) {
        self.durable = durable
        self.interval = interval
    }

    /// Waiters whose record is not on disk yet.
    var waitingCount: Int { waiters.count }

    /// Record `sequence` was written; `waiter` is answered once it is on disk.
    mutating func written(_ sequence: UInt64, waiter: Waiter) {
        waiters.append((sequence, waiter))
    }

    /// Whether a sync should start now. At once when a waiter's record is not on disk yet and no sync runs (group
    /// commit: the records written while one sync ran share the next); for anything else the spool has to make durable
    /// (`spoolDirty`: the commit point, records nobody waits for), at most every `interval`. Never two at a time.
    func shouldStartSync(spoolDirty: Bool, now: ContinuousClock.Instant) -> Bool {
        guard syncing == nil else { return false }
        let due = lastSyncStarted.map { now - $0 >= interval } ?? true
        return !waiters.isEmpty || (spoolDirty && due)
    }

    /// A sync started, covering every record written up to `written` (also the final one at shutdown, due or not).
    mutating func syncStarted(covering written: UInt64, now: ContinuousClock.Instant) {
        precondition(syncing == nil, "two spool syncs at a time")
        syncing = written
        lastSyncStarted = now
    }

    /// The sync in flight returned: the waiters it covered, each with whether its record is on disk (false when the
    /// sync failed: the record may still be published from the spool, but nobody is told it is safe).
    mutating func syncFinished(succeeded: Bool) -> [(waiter: Waiter, stored: Bool)] {
        guard let covered = syncing else { return [] }
        syncing = nil
        if succeeded { durable = max(durable, covered) }
        let answered = waiters.prefix { $0.sequence <= covered }
        waiters.removeFirst(answered.count)
        return answered.map { ($0.waiter, succeeded) }
    }

    /// The spool closes: the waiters left (whose records no sync covered) are answered as not stored.
    mutating func close() -> [Waiter] {
        defer { waiters.removeAll() }
        return waiters.map(\.waiter)
    }
}
