@testable import MQTT
import Testing

/// When the durable spool's fdatasync starts and whom its return answers, without a thread or a file.
@Suite struct SpoolDurabilityTests {
    let start = ContinuousClock.now

    @Test func aRecordIsAnsweredOnlyByASyncThatStartedAfterItWasWritten() {
        var durability = SpoolDurability<String>(durable: 0)
        durability.written(1, waiter: "first")
        #expect(durability.shouldStartSync(spoolDirty: true, now: start))
        durability.syncStarted(covering: 1, now: start)
        // Written while the sync for record 1 runs: that sync's return must not answer it.
        durability.written(2, waiter: "second")
        durability.written(3, waiter: "third")
        let first = durability.syncFinished(succeeded: true)
        #expect(first.map(\.waiter) == ["first"])
        #expect(durability.durable == 1)
        // The next sync starts at once (a waiter waits), covering both records written meanwhile: group commit.
        #expect(durability.shouldStartSync(spoolDirty: true, now: start))
        durability.syncStarted(covering: 3, now: start)
        let rest = durability.syncFinished(succeeded: true)
        #expect(rest.map(\.waiter) == ["second", "third"])
        let allStored = rest.allSatisfy(\.stored)
        #expect(allStored)
        #expect(durability.durable == 3)
        #expect(durability.waitingCount == 0)
    }

    @Test func neverTwoSyncsAtATime() {
        var durability = SpoolDurability<Int>(durable: 0)
        durability.written(1, waiter: 1)
        durability.syncStarted(covering: 1, now: start)
        durability.written(2, waiter: 2)
        #expect(!durability.shouldStartSync(spoolDirty: true, now: start + .seconds(5)))
    }

    @Test func whatNobodyWaitsForIsSyncedAtMostEveryInterval() {
        var durability = SpoolDurability<Int>(durable: 0, interval: .milliseconds(100))
        #expect(!durability.shouldStartSync(spoolDirty: false, now: start), "nothing to make durable")
        #expect(durability.shouldStartSync(spoolDirty: true, now: start))
        durability.syncStarted(covering: 0, now: start)
        #expect(durability.syncFinished(succeeded: true).isEmpty)
        #expect(!durability.shouldStartSync(spoolDirty: true, now: start + .milliseconds(50)))
        #expect(durability.shouldStartSync(spoolDirty: true, now: start + .milliseconds(100)))
        // A waiter does not wait for the interval.
        durability.written(1, waiter: 1)
        #expect(durability.shouldStartSync(spoolDirty: true, now: start + .milliseconds(1)))
    }

    @Test func aFailedSyncAnswersItsRecordsAsNotStoredAndTheyAreNotDurable() {
        var durability = SpoolDurability<Int>(durable: 4)
        durability.written(5, waiter: 5)
        durability.syncStarted(covering: 5, now: start)
        durability.written(6, waiter: 6)
        let answers = durability.syncFinished(succeeded: false)
        #expect(answers.map(\.waiter) == [5])
        #expect(answers.map(\.stored) == [false])
        #expect(durability.durable == 4)
        #expect(durability.waitingCount == 1)
    }

    @Test func closingAnswersTheWaitersNoSyncCovered() {
        var durability = SpoolDurability<Int>(durable: 0)
        durability.written(1, waiter: 1)
        durability.written(2, waiter: 2)
        let left = durability.close()
        #expect(left == [1, 2])
        #expect(durability.waitingCount == 0)
    }
}
