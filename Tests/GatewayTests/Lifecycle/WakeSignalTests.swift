@testable import Gateway
import Testing
import Wear2MQTTTesting

/// On a `ManualClock`: a deadline passes when the test advances the clock, never by waiting for it.
@Suite("WakeSignal")
struct WakeSignalTests {
    @Test("a signal wakes the waiting task")
    func signalWakes() async {
        let clock = ManualClock()
        let signal = WakeSignal(time: clock.timeSource)
        let waiter = Task { await signal.wait(until: clock.now + .seconds(60)) }
        // Parked: its deadline's timer sleeps on the clock.
        #expect(await clock.sleepers(atLeast: 1))
        signal.signal()
        #expect(await waiter.value)
    }

    @Test("a signal with nobody waiting is kept for the next wait, once")
    func signalIsKept() async {
        let clock = ManualClock()
        let signal = WakeSignal(time: clock.timeSource)
        signal.signal()
        signal.signal()
        #expect(await signal.wait(until: nil))
        let second = Task { await signal.wait(until: clock.now + .milliseconds(20)) }
        #expect(await clock.sleepers(atLeast: 1))
        await clock.advance(by: .milliseconds(20))
        #expect(await second.value == false, "two signals before a wait are one")
    }

    @Test("the deadline ends the wait without a signal")
    func deadline() async {
        let clock = ManualClock()
        let signal = WakeSignal(time: clock.timeSource)
        let expiring = Task { await signal.wait(until: clock.now + .milliseconds(20)) }
        #expect(await clock.sleepers(atLeast: 1))
        await clock.advance(by: .milliseconds(19))
        #expect(clock.sleeperCount == 1, "not before its deadline")
        await clock.advance(by: .milliseconds(1))
        #expect(await expiring.value == false)
        signal.signal()
        #expect(await signal.wait(until: clock.now + .seconds(5)), "a later signal is not lost to the expired wait")
    }

    @Test("cancelling the waiting task ends its wait")
    func cancellation() async {
        let clock = ManualClock()
        let signal = WakeSignal(time: clock.timeSource)
        let waiter = Task { await signal.wait(until: clock.now + .seconds(60)) }
        #expect(await clock.sleepers(atLeast: 1))
        waiter.cancel()
        #expect(await waiter.value == false)
    }
}
