@testable import Gateway
import Testing

/// The tracker that tells a driver when its records are on disk (`DurableRecords`), now that records are handed to the
/// spool without waiting for each: settlements mostly come in order, but a record the spool refuses at once settles
/// before the ones ahead of it that still wait for their sync.
@Suite struct DurableRecordTrackerTests {
    @Test func aRangeIsStoredOnlyOnceEveryRecordInItSettled() async {
        let tracker = DurableRecordTracker()
        for _ in 1...3 { tracker.queued() }
        tracker.finished(1, stored: true)
        tracker.finished(3, stored: true)  // early: 2 still waits for its sync
        let waiting = Task { await tracker.stored(after: 0, upTo: 3) }
        tracker.finished(2, stored: true)
        let stored = await waiting.value
        #expect(stored)
    }

    @Test func aRecordRefusedOutOfOrderMakesItsRangeNotStoredButNotTheRangeBefore() async {
        let tracker = DurableRecordTracker()
        for _ in 1...4 { tracker.queued() }
        tracker.finished(4, stored: false)
        tracker.finished(1, stored: true)
        tracker.finished(2, stored: true)
        let before = await tracker.stored(after: 0, upTo: 2)
        #expect(before)
        tracker.finished(3, stored: true)
        let range = await tracker.stored(after: 2, upTo: 4)
        #expect(!range)
    }

    @Test func aSettlementTwiceOrOfARecordAlreadyCountedChangesNothing() async {
        let tracker = DurableRecordTracker()
        for _ in 1...2 { tracker.queued() }
        tracker.finished(1, stored: true)
        tracker.finished(1, stored: false)
        tracker.finished(2, stored: true)
        tracker.finished(2, stored: false)
        let stored = await tracker.stored(after: 0, upTo: 2)
        #expect(stored)
    }

    @Test func atTheEndRecordsStillUnsettledCountAsNotStored() async {
        let tracker = DurableRecordTracker()
        for _ in 1...2 { tracker.queued() }
        tracker.finished(1, stored: true)
        let waiting = Task { await tracker.stored(after: 0, upTo: 2) }
        tracker.end()
        let stored = await waiting.value
        #expect(!stored)
    }
}
