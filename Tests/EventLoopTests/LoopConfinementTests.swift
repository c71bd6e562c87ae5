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
        // The loop finishes the iteration under way; a task submitted after the end is dropped. Submit one at a time
        // until one is.
        var dropped = false
        for _ in 0..<10_000 where !dropped { dropped = await ranOrDropped(loop) == nil }
        #expect(dropped, "the loop went on running tasks after stop()")
        #expect(!loop.inEventLoop, "ended")
    }

    /// Submits a task to `loop` and returns once the loop let go of it: what `inEventLoop` said in it when it ran, nil
    /// when it was dropped. (A closure the loop lets go of is released: the token's deinit is the event.)
    func ranOrDropped(_ loop: EventLoop) async -> Bool? {
        let answer = Answer()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let token = ReleaseToken { continuation.resume() }
            loop.execute {
                withExtendedLifetime(token) { answer.value.withLock { $0 = loop.inEventLoop } }
            }
        }
        return answer.value.withLock { $0 }
    }

    final class Answer: Sendable {
        let value = Mutex<Bool?>(nil)
    }

    /// Calls `released` when the last reference goes.
    final class ReleaseToken: Sendable {
        private let released: @Sendable () -> Void
        init(_ released: @escaping @Sendable () -> Void) { self.released = released }
        deinit { released() }
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
