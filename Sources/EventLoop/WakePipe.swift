#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The self-pipe that wakes a thread blocked in `poll()` when another thread has work for it: the D-Bus connection
/// loop, the notify reader, the mosquitto connection and the simulator's sockets each own one. Both ends are
/// non-blocking and close-on-exec, so a wake never blocks its caller (a full pipe already means "wake up") and a
/// child process inherits neither.
///
/// The thread that polls puts `readDescriptor` in its poll set for `POLLIN` and calls `drain()` when it is readable;
/// any thread calls `wake()`. Issue 21 grows this module into the one epoll loop of the data path.
public final class WakePipe: @unchecked Sendable {
    // @unchecked: the two descriptors are fixed at init; write(2) and read(2) on them are thread-safe, and `close`
    // is called once, by the owner, after the polling thread has stopped.
    public let readDescriptor: Int32
    private let writeDescriptor: Int32
    private var closed = false

    public struct CreationError: Error, CustomStringConvertible {
        public let errno: Int32
        public var description: String { "cannot create the wake pipe: \(String(cString: strerror(errno)))" }
    }

    public init() throws(CreationError) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw CreationError(errno: errno) }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readDescriptor = fds[0]
        writeDescriptor = fds[1]
    }

    /// Makes `readDescriptor` readable. Wakes coalesce: many before one `drain()` cost one wake-up.
    public func wake() {
        var byte: UInt8 = 1
        _ = write(writeDescriptor, &byte, 1)
    }

    /// Empties the pipe; never blocks.
    public func drain() {
        var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &buffer, { read(readDescriptor, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// A `pollfd` for the read end, `POLLIN`.
    public var pollDescriptor: pollfd { pollfd(fd: readDescriptor, events: Int16(POLLIN), revents: 0) }

    /// Closes both ends; later calls do nothing.
    public func close() {
        guard !closed else { return }
        closed = true
        _ = closeDescriptor(readDescriptor)
        _ = closeDescriptor(writeDescriptor)
    }

    deinit { close() }
}

#if canImport(Glibc)
private let closeDescriptor = Glibc.close
#elseif canImport(Musl)
private let closeDescriptor = Musl.close
#elseif canImport(Darwin)
private let closeDescriptor = Darwin.close
#endif
