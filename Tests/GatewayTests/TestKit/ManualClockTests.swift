import EventLoop
import Synchronization
import Testing
import Wear2MQTTTesting

@Suite("Test kit: ManualClock and ChangeNotifier")
struct ManualClockTests {
    @Test("a sleeper wakes when the clock reaches its deadline, not before, and both readings move together")
    func deadlines() async throws {
        let clock = ManualClock(unixMilliseconds: 1_000)
        let start = clock.now
        let woke = Mutex<ContinuousClock.Instant?>(nil)
        let sleeper = Task {
            try await clock.sleep(until: start + .seconds(2))
            woke.withLock { $0 = clock.now }
        }
        #expect(await clock.sleepers(atLeast: 1))
        await clock.advance(by: .milliseconds(1999))
        #expect(woke.withLock { $0 } == nil)
        await clock.advance(by: .seconds(3))
        try await sleeper.value
        #expect(woke.withLock { $0 } == start + .seconds(2), "woken at its deadline on the way, not at the end of the advance")
        #expect(clock.now == start + .milliseconds(4999))
        #expect(clock.unixMilliseconds == 5_999)
    }

    @Test("a timer that re-arms itself fires as often as the advanced span holds")
    func periodic() async throws {
        let clock = ManualClock()
        let ticks = Mutex(0)
        let ticker = Task {
            var next = clock.now
            while !Task.isCancelled {
                next += .milliseconds(20)
                try await clock.sleep(until: next)
                ticks.withLock { $0 += 1 }
            }
        }
        #expect(await clock.sleepers(atLeast: 1))
        await clock.advance(by: .seconds(1))
        #expect(ticks.withLock { $0 } == 50)
        ticker.cancel()
        await #expect(throws: CancellationError.self) { try await ticker.value }
    }

    @Test("a past deadline returns at once; cancelling a sleeper ends it with CancellationError")
    func pastAndCancelled() async throws {
        let clock = ManualClock()
        try await clock.sleep(until: clock.now)
        let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
        #expect(await clock.sleepers(atLeast: 1))
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("until: true at the change that makes the condition hold; false at its guard when nothing changes")
    func until() async {
        let notifier = ChangeNotifier()
        let value = Mutex(0)
        let waiter = Task { await notifier.until { value.withLock { $0 } == 3 } }
        for _ in 0..<3 {
            value.withLock { $0 += 1 }
            notifier.changed()
        }
        #expect(await waiter.value)
        #expect(await notifier.until(timeout: .milliseconds(10)) { false } == false)
    }
}
