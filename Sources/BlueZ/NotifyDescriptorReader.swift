#if canImport(Glibc)
import Glibc
#endif
import DBus
import Foundation
import Synchronization

/// Reads the notification sockets that AcquireNotify hands out. One thread polls all of them (one per
/// subscribed characteristic across every device), so a hundred high-rate streams cost one thread, and
/// every datagram is one notification.
///
/// `@unchecked Sendable`: the registrations are behind a mutex; the poll buffer is confined to the thread.
final class NotifyDescriptorReader: @unchecked Sendable {
    private struct Registration {
        var fd: UnixFileDescriptor
        var continuation: AsyncStream<[UInt8]>.Continuation
    }

    private let registrations = Mutex<[Int32: Registration]>([:])
    private let wakePipe: (read: Int32, write: Int32)
    private let started = Mutex(false)

    init() {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
        }
        wakePipe = (fds[0], fds[1])
    }

    /// Streams the datagrams arriving on `fd` until the other side closes it (BlueZ does when the link drops)
    /// or the consumer stops (then we close it, which tells BlueZ to stop notifying).
    func stream(_ fd: UnixFileDescriptor) -> AsyncStream<[UInt8]> {
        _ = fcntl(fd.rawValue, F_SETFL, fcntl(fd.rawValue, F_GETFL) | O_NONBLOCK)
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(4096))
        registrations.withLock { $0[fd.rawValue] = Registration(fd: fd, continuation: continuation) }
        continuation.onTermination = { [weak self] _ in self?.unregister(fd.rawValue) }
        startIfNeeded()
        wake()
        return stream
    }

    private func unregister(_ fd: Int32) {
        // Dropping the registration drops the last reference to the descriptor, which closes it.
        let removed = registrations.withLock { $0.removeValue(forKey: fd) }
        removed?.continuation.finish()
        wake()
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
    }

    private func startIfNeeded() {
        let first = started.withLock { value in defer { value = true }; return !value }
        guard first else { return }
        let thread = Thread { [self] in run() }
        thread.name = "bluez-notify"
        thread.start()
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let fds = registrations.withLock { Array($0.keys) }
            var descriptors = [pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)]
            descriptors += fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&descriptors, nfds_t(descriptors.count), 1000)
            if descriptors[0].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while read(wakePipe.read, &drain, drain.count) > 0 {}
            }
            for descriptor in descriptors.dropFirst() where descriptor.revents != 0 {
                guard let continuation = registrations.withLock({ $0[descriptor.fd]?.continuation }) else { continue }
                var ended = descriptor.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
                while true {
                    let count = recv(descriptor.fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                    if count > 0 {
                        continuation.yield(Array(buffer[0..<count]))
                        continue
                    }
                    if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) { ended = true }
                    break
                }
                if ended { unregister(descriptor.fd) }
            }
        }
    }
}
