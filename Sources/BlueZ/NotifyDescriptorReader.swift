#if canImport(Glibc)
import Glibc
#endif
import DBus
import EventLoop
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

    /// The registrations and a generation that changes with them, so the poll thread rebuilds its
    /// descriptor list only when a stream starts or ends, not on every wake-up.
    private let registrations = Mutex<(byDescriptor: [Int32: Registration], generation: UInt64)>(([:], 0))
    /// Nil when no pipe could be made (out of descriptors): then `stream` declines and the client uses StartNotify.
    private let wakePipe: WakePipe?
    private let started = Mutex(false)

    init() {
        wakePipe = try? WakePipe()
    }

    /// Streams the datagrams arriving on `fd` until the other side closes it (BlueZ does when the link drops)
    /// or the consumer stops (then we close it, which tells BlueZ to stop notifying). Nil when this reader has no
    /// wake pipe and so could not follow a new descriptor.
    func stream(_ fd: UnixFileDescriptor) -> AsyncStream<[UInt8]>? {
        guard wakePipe != nil else { return nil }
        _ = fcntl(fd.rawValue, F_SETFL, fcntl(fd.rawValue, F_GETFL) | O_NONBLOCK)
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(4096))
        registrations.withLock {
            $0.byDescriptor[fd.rawValue] = Registration(fd: fd, continuation: continuation)
            $0.generation &+= 1
        }
        continuation.onTermination = { [weak self] _ in self?.unregister(fd.rawValue) }
        startIfNeeded()
        wake()
        return stream
    }

    private func unregister(_ fd: Int32) {
        // Dropping the registration drops the last reference to the descriptor, which closes it.
        let removed = registrations.withLock { state -> Registration? in
            state.generation &+= 1
            return state.byDescriptor.removeValue(forKey: fd)
        }
        removed?.continuation.finish()
        wake()
    }

    private func wake() { wakePipe?.wake() }

    private func startIfNeeded() {
        let first = started.withLock { value in defer { value = true }; return !value }
        guard first else { return }
        guard let wakePipe else { return }
        let thread = Thread { [self] in run(wakePipe) }
        thread.name = "bluez-notify"
        thread.start()
    }

    /// The poll loop. It allocates nothing per wake-up apart from the datagrams it hands on: the descriptor
    /// list and the continuations are a snapshot taken again only when the registrations change.
    private func run(_ wakePipe: WakePipe) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var descriptors: [pollfd] = []
        var continuations: [AsyncStream<[UInt8]>.Continuation] = []
        var snapshotGeneration: UInt64?
        while true {
            registrations.withLock { state in
                guard state.generation != snapshotGeneration else { return }
                snapshotGeneration = state.generation
                descriptors.removeAll(keepingCapacity: true)
                continuations.removeAll(keepingCapacity: true)
                descriptors.append(wakePipe.pollDescriptor)
                for (fd, registration) in state.byDescriptor {
                    descriptors.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
                    continuations.append(registration.continuation)
                }
            }
            _ = poll(&descriptors, nfds_t(descriptors.count), 1000)
            if descriptors[0].revents != 0 { wakePipe.drain() }
            descriptors[0].revents = 0
            // A stream that ended meanwhile may have closed its descriptor and a new one reused the number:
            // read nothing through a stale snapshot (poll is level-triggered, so no datagram is missed).
            guard registrations.withLock({ $0.generation }) == snapshotGeneration else { continue }
            for index in 1..<descriptors.count where descriptors[index].revents != 0 {
                let fd = descriptors[index].fd
                var ended = descriptors[index].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
                descriptors[index].revents = 0
                while true {
                    let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                    if count > 0 {
                        continuations[index - 1].yield(Array(buffer[0..<count]))
                        continue
                    }
                    if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) { ended = true }
                    break
                }
                if ended {
                    // Poll no more on it before the snapshot is rebuilt: it is closed by the unregistration.
                    descriptors[index].fd = -1
                    unregister(fd)
                }
            }
        }
    }
}
