import EventLoop
import Glibc
import Testing

@Suite("WakePipe")
struct WakePipeTests {
    /// Whether the read end is readable now, without waiting.
    func isReadable(_ pipe: WakePipe) -> Bool {
        var descriptor = pipe.pollDescriptor
        return poll(&descriptor, 1, 0) == 1 && descriptor.revents & Int16(POLLIN) != 0
    }

    @Test("a wake makes the read end readable; a drain makes it quiet again")
    func wakeAndDrain() throws {
        let pipe = try WakePipe()
        #expect(!isReadable(pipe))
        pipe.wake()
        #expect(isReadable(pipe))
        pipe.drain()
        #expect(!isReadable(pipe))
    }

    @Test("many wakes coalesce: one drain clears them, even more than a read's worth")
    func wakesCoalesce() throws {
        let pipe = try WakePipe()
        for _ in 0..<1000 { pipe.wake() }
        #expect(isReadable(pipe))
        pipe.drain()
        #expect(!isReadable(pipe))
    }

    @Test("draining a pipe nobody woke returns at once")
    func drainWithoutWake() throws {
        let pipe = try WakePipe()
        pipe.drain()
        #expect(!isReadable(pipe))
    }

    @Test("a full pipe does not block the waker")
    func wakeNeverBlocks() throws {
        let pipe = try WakePipe()
        for _ in 0..<200_000 { pipe.wake() }
        #expect(isReadable(pipe))
    }

    @Test("both ends are close-on-exec, and close is idempotent")
    func closeOnExecAndClose() throws {
        let pipe = try WakePipe()
        #expect(fcntl(pipe.readDescriptor, F_GETFD) & FD_CLOEXEC != 0)
        pipe.close()
        pipe.close()
        #expect(fcntl(pipe.readDescriptor, F_GETFD) == -1, "closed")
    }
}
