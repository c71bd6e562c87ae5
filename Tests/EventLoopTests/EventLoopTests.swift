import EventLoop
import Foundation
import Glibc
import Synchronization
import Testing

/// The data path's loop: tasks, descriptors, timers and iteration hooks, all on its one thread.
@Suite("EventLoop")
struct EventLoopTests {
    /// Runs `body` on the loop and returns its result: every task submitted before it has run, and every
    /// descriptor ready before it was handled (the loop handles events before tasks in an iteration).
    func onLoop<T: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in loop.execute { continuation.resume(returning: body()) } }
    }

    /// A non-blocking pipe: (read end, write end).
    func makePipe() -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0)
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        return (fds[0], fds[1])
    }

    func write(_ fd: Int32, _ bytes: [UInt8]) {
        var bytes = bytes
        _ = Glibc.write(fd, &bytes, bytes.count)
    }

    @Test("tasks from other threads run on the loop thread, in the order they were submitted")
    func tasksRunInOrderOnTheLoop() async throws {
        let loop = try EventLoop.started(name: "test-loop")
        defer { loop.stop() }
        let seen = Mutex<[Int]>([])
        let onLoopThread = Mutex(true)
        for index in 0..<100 {
            loop.execute {
                if !loop.inEventLoop { onLoopThread.withLock { $0 = false } }
                seen.withLock { $0.append(index) }
            }
        }
        await onLoop(loop) {}
        #expect(seen.withLock { $0 } == Array(0..<100))
        #expect(onLoopThread.withLock { $0 })
        #expect(!loop.inEventLoop)
    }

    @Test("the loop's thread carries its name, as top -H and perf show it")
    func threadName() async throws {
        let loop = try EventLoop.started(name: "data-path")
        defer { loop.stop() }
        let name = await onLoop(loop) {
            (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(name == "data-path")
    }

    @Test("a readable descriptor calls its handler on the loop; after deregistering, it no longer does")
    func descriptorsAndDeregistration() async throws {
        let loop = try EventLoop.started(name: "test-loop")
        defer { loop.stop() }
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd); close(writeEnd) }
        let received = Mutex<[UInt8]>([])
        let registration = await onLoop(loop) {
            try? loop.register(readEnd, interest: .readable) { _ in
                var byte: UInt8 = 0
                while read(readEnd, &byte, 1) == 1 { received.withLock { $0.append(byte) } }
            }
        }
        let registered = try #require(registration)
        write(writeEnd, [1, 2, 3])
        await onLoop(loop) {}
        #expect(received.withLock { $0 } == [1, 2, 3])
        await onLoop(loop) { loop.deregister(registered) }
        write(writeEnd, [9])
        await onLoop(loop) {}
        #expect(received.withLock { $0 } == [1, 2, 3], "nothing after deregistering")
    }

    @Test("timers run in deadline order; a cancelled one never runs")
    func timers() async throws {
        let loop = try EventLoop.started(name: "test-loop")
        defer { loop.stop() }
        let fired = Mutex<[String]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            loop.execute {
                let now = ContinuousClock.now
                loop.schedule(at: now + .milliseconds(60)) {
                    fired.withLock { $0.append("late") }
                    done.resume()
                }
                loop.schedule(at: now + .milliseconds(20)) { fired.withLock { $0.append("early") } }
                let cancelled = loop.schedule(at: now + .milliseconds(40)) { fired.withLock { $0.append("cancelled") } }
                loop.cancel(cancelled)
            }
        }
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
        await onLoop(loop) {
            _ = try? loop.register(readEnd, interest: .readable) { _ in
                var buffer = [UInt8](repeating: 0, count: 64)
                let count = read(readEnd, &buffer, 64)
                if count > 0 { pending.withLock { $0 += count } }
            }
            loop.whenIterationEnds {
                let count = pending.withLock { count in defer { count = 0 }; return count }
                if count > 0 { log.withLock { $0.append("flush \(count)") } }
            }
        }
        write(writeEnd, [1, 2, 3, 4, 5])
        // The first task runs in the iteration that read the burst; the second after that iteration's hook.
        await onLoop(loop) {}
        await onLoop(loop) {}
        #expect(log.withLock { $0 } == ["flush 5"])
    }

    @Test("with a coalescing window, every byte of a busy stream still arrives in order, and timers still fire")
    func coalescingLosesNothing() async throws {
        let loop = try EventLoop(name: "test-loop")
        loop.coalescingWindow = .milliseconds(3)
        loop.start()
        defer { loop.stop() }
        let pipes = (0..<4).map { _ in makePipe() }
        defer { for (readEnd, writeEnd) in pipes { close(readEnd); close(writeEnd) } }
        let received = Mutex<[[UInt8]]>(Array(repeating: [], count: pipes.count))
        await onLoop(loop) {
            for (index, (readEnd, _)) in pipes.enumerated() {
                _ = try? loop.register(readEnd, interest: .readable) { _ in
                    var buffer = [UInt8](repeating: 0, count: 256)
                    let count = read(readEnd, &buffer, 256)
                    if count > 0 { received.withLock { $0[index] += buffer[0..<count] } }
                }
            }
        }
        let ticks = Mutex(0)
        let (twentieth, ticked) = AsyncStream.makeStream(of: Void.self)
        // A timer that reschedules itself every millisecond while the stream runs: coalescing may delay it, never drop it.
        @Sendable func tick() {
            loop.schedule(at: .now + .milliseconds(1)) {
                if ticks.withLock({ count in count += 1; return count }) < 20 { tick() } else { ticked.finish() }
            }
        }
        loop.execute { tick() }
        for round in 0..<200 {
            for (_, writeEnd) in pipes { write(writeEnd, [UInt8(round)]) }
            if round % 10 == 0 { await onLoop(loop) {} }
        }
        await onLoop(loop) {}
        #expect(received.withLock { $0 } == Array(repeating: (0..<200).map { UInt8($0) }, count: pipes.count))
        for await _ in twentieth {}
        #expect(ticks.withLock { $0 } == 20)
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
