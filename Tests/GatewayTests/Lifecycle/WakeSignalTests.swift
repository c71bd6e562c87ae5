@testable import Gateway
import Testing

@Suite("WakeSignal")
struct WakeSignalTests {
    @Test("a signal wakes the waiting task")
    func signalWakes() async {
        let signal = WakeSignal()
        let waiter = Task { await signal.wait(until: nil) }
        try? await Task.sleep(for: .milliseconds(20))
        signal.signal()
        #expect(await waiter.value)
    }

    @Test("a signal with nobody waiting is kept for the next wait, once")
    func signalIsKept() async {
        let signal = WakeSignal()
        signal.signal()
        signal.signal()
        #expect(await signal.wait(until: nil))
        #expect(await signal.wait(until: .now + .milliseconds(20)) == false, "two signals before a wait are one")
    }

    @Test("the deadline ends the wait without a signal")
    func deadline() async {
        let signal = WakeSignal()
        #expect(await signal.wait(until: .now + .milliseconds(20)) == false)
        signal.signal()
        #expect(await signal.wait(until: .now + .seconds(5)), "a later signal is not lost to the expired wait")
    }

    @Test("cancelling the waiting task ends its wait")
    func cancellation() async {
        let signal = WakeSignal()
        let waiter = Task { await signal.wait(until: nil) }
        try? await Task.sleep(for: .milliseconds(20))
        waiter.cancel()
        #expect(await waiter.value == false)
    }
}
