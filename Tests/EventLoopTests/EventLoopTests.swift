import EventLoop
import Foundation
import Glibc
import Synchronization
import Testing

/// The data path's loop: tasks, descriptors, timers and iteration hooks, all on its one thread.
@Suite("EventLoop", .timeLimit(.minutes(1)))
struct EventLoopTests {
    /// Waits (without a timed assertion: only a bound) until `done` holds.
    func waitUntil(_ done: () -> Bool) async {
        for _ in 0..<2000 where !done() { try? await Task.sleep(for: .milliseconds(5)) }
    }

    /// A non-blocking pipe: (read end, write end).
    func makePipe() -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0)
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        return (fds[0], fds[1])
    }

    @Test("tasks from other threads run on the loop thread, in the order they were submitted")
    func tasksRunInOrderOnTheLoop() async throws {
        let loop = try EventLoop.started(name: "test-loop")
        defer { loop.stop() }
        let seen = Mutex<[Int]>([])
        let onLoop = Mutex(true)
        for index in 0..<100 {
            loop.execute {
                if !loop.inEventLoop { onLoop.withLock { $0 = false } }
                seen.withLock { $0.append(index) }
            }
        }
        await waitUntil { seen.withLock { $0.count } == 100 }
        #expect(seen.withLock { $0 } == Array(0..<100))
        #expect(onLoop.withLock { $0 })
        #expect(!loop.inEventLoop)
    }

    @Test("the loop's thread carries its name, as top -H and perf show it")
    func threadName() async throws {
        let loop = try EventLoop.started(name: "data-path")
        defer { loop.stop() }
        let name = Mutex<String?>(nil)
        loop.execute {
            let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
            name.withLock { $0 = comm?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "" }
        }
        await waitUntil { name.withLock { $0 } != nil }
        #expect(name.withLock { $0 } == "data-path")
    }

    @Test("a readable descriptor calls its handler on the loop; after deregistering, it no longer does")
    func descriptorsAndDeregistration() async throws {
        let loop = try EventLoop.started(name: "test-loop")
        defer { loop.stop() }
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd); close(writeEnd) }
        let received = Mutex<[UInt8]>([])
        let registration = Mutex<EventLoop.Registration?>(nil)
        loop.execute {
            registration.withLock {
                $0 = try? loop.register(readEnd, interest: .readable) { readiness in
                    var byte: UInt8 = 0
                    while read(readEnd, &byte, 1) == 1 { received.withLock { $0.append(byte) } }
                }
            }
        }
        await waitUntil { registration.withLock { $0 } != nil }
        for value: UInt8 in [1, 2, 3] {
            var byte = value
            _ = write(writeEnd, &byte, 1)
        }
        await waitUntil { received.withLock { $0.count } == 3 }
        #expect(received.withLock { $0 } == [1, 2, 3])
        let deregistered = Mutex(false)
        loop.execute {
            if let registration = registration.withLock({ $0 }) { loop.deregister(registration) }
            deregistered.withLock { $0 = true }
        }
        await waitUntil { deregistered.withLock { $0 } }
        var byte: UInt8 = 9
        _ = write(writeEnd, &byte, 1)
        let flushed = Mutex(false)
        loop.execute { flushed.withLock { $0 = true } }
        await waitUntil { flushed.withLock { $0 } }
        try await Task.sleep(for: .milliseconds(50))
        #expect(received.withLock { $0 } == [1, 2, 3], "nothing after deregistering")
    }

    @Test("timers run in deadline order; a cancelled one never runs")
    func timers() async throws {
        let loop = try EventLoop.started(name: "test-loop")
        defer { loop.stop() }
        let fired = Mutex<[String]>([])
        loop.execute {
            let now = ContinuousClock.now
            loop.schedule(at: now + .milliseconds(60)) { fired.withLock { $0.append("late") } }
            loop.schedule(at: now + .milliseconds(20)) { fired.withLock { $0.append("early") } }
            let cancelled = loop.schedule(at: now + .milliseconds(40)) { fired.withLock { $0.append("cancelled") } }
            loop.cancel(cancelled)
        }
        await waitUntil { fired.withLock { $0.count } == 2 }
        try await Task.sleep(for: .milliseconds(50))
        #expect(fired.withLock { $0 } == ["early", "late"])
    }

    @Test("the iteration hook runs after what the iteration did: one flush for a burst of events")
    func iterationHookCoalesces() async throws {
        let loop = try EventLoop.started(name: "test-loop")
        defer { loop.stop() }
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd); close(writeEnd) }
        let log = Mutex<[String]>([])
        let pending = Mutex(0)
        let ready = Mutex(false)
        loop.execute {
            _ = try? loop.register(readEnd, interest: .readable) { _ in
                var buffer = [UInt8](repeating: 0, count: 64)
                let count = read(readEnd, &buffer, 64)
                if count > 0 { pending.withLock { $0 += count } }
            }
            loop.whenIterationEnds {
                let count = pending.withLock { count in defer { count = 0 }; return count }
                if count > 0 { log.withLock { $0.append("flush \(count)") } }
            }
            ready.withLock { $0 = true }
        }
        await waitUntil { ready.withLock { $0 } }
        var burst: [UInt8] = [1, 2, 3, 4, 5]
        _ = write(writeEnd, &burst, 5)
        await waitUntil { !log.withLock { $0 }.isEmpty }
        #expect(log.withLock { $0 } == ["flush 5"])
    }

    @Test("the timer queue orders by deadline, then by scheduling; cancelled timers are skipped")
    func timerQueue() {
        var queue = TimerQueue<String>()
        let start = ContinuousClock.now
        _ = queue.schedule(at: start + .seconds(2), "b")
        _ = queue.schedule(at: start + .seconds(1), "a")
        _ = queue.schedule(at: start + .seconds(2), "c")
        let gone = queue.schedule(at: start + .milliseconds(500), "gone")
        queue.cancel(gone)
        #expect(queue.nextDeadline() == start + .seconds(1))
        #expect(queue.takeDue(at: start + .seconds(1)) == ["a"])
        #expect(queue.takeDue(at: start + .seconds(3)) == ["b", "c"])
        #expect(queue.isEmpty && queue.nextDeadline() == nil)
    }
}
