import EventLoop
import Foundation
import Synchronization
import Testing

/// Loop confinement is checked, not commented: `inEventLoop` says whether the caller is on the loop's thread,
/// `assertInEventLoop` and every `LoopBound` access trap in debug builds when it is not.
@Suite("Loop confinement")
struct LoopConfinementTests {
    func onLoop<T: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in loop.execute { continuation.resume(returning: body()) } }
    }

    @Test("the loop's thread is in the loop; the test's thread is not, nor anyone before the start or after the end")
    func inEventLoopAnswersForTheCallersThread() async throws {
        let loop = try EventLoop(name: "confined")
        #expect(!loop.inEventLoop, "not started")
        loop.start()
        #expect(await onLoop(loop) { loop.inEventLoop })
        #expect(!loop.inEventLoop, "the test's thread")
        let otherThread = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: loop.inEventLoop) }.start()
        }
        #expect(!otherThread, "a thread of its own")
        loop.stop()
        // A task submitted after the end is dropped; poll until the loop has let go of its thread.
        let ended = ContinuousClock.now + .seconds(5)
        while await onLoopOrNil(loop) != nil, .now < ended { try await Task.sleep(for: .milliseconds(5)) }
        #expect(!loop.inEventLoop, "ended")
    }

    /// Whether a task still runs on `loop` (nil once it ended and drops tasks), waiting at most 100 ms.
    func onLoopOrNil(_ loop: EventLoop) async -> Bool? {
        let answer = Mutex<Bool?>(nil)
        loop.execute { answer.withLock { $0 = loop.inEventLoop } }
        try? await Task.sleep(for: .milliseconds(100))
        return answer.withLock { $0 }
    }

    @Test("a LoopBound value is read and mutated in place on its loop, by every closure that holds it")
    func loopBoundOnTheLoop() async throws {
        let loop = try EventLoop.started(name: "confined")
        defer { loop.stop() }
        // Made off the loop: the value is handed over whole.
        let counts = LoopBound([Int](), loop: loop)
        for index in 0..<100 { loop.execute { counts.value.append(index) } }
        let timerFired = await withCheckedContinuation { continuation in
            loop.execute {
                loop.schedule(at: .now) {
                    counts.value.append(-1)
                    continuation.resume(returning: counts.value.last)
                }
            }
        }
        #expect(timerFired == -1)
        #expect(await onLoop(loop) { counts.value } == Array(0..<100) + [-1])
    }

    // No exit tests of the traps themselves: Swift Testing's exit-test monitor waits with `waitid(P_ALL, WNOWAIT)`,
    // which spins at full CPU once another child of the test process (a broker, a simulator, a gateway of the
    // end-to-end suites, reaped by its own pid) has exited, and the whole suite hung at its end (2026-11-28). The
    // checks the traps rest on (`inEventLoop` on, off, before and after the loop) are tested above.
}
