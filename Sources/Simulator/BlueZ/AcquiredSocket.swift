#if canImport(Glibc)
import Glibc
#endif
import DBus
import EventLoop
import Foundation
import Synchronization

/// Our end of the SOCK_SEQPACKET socket pair that AcquireNotify and AcquireWrite hand to a client, as
/// bluetoothd creates it (`create_sock` in `src/gatt-client.c`): one datagram per notification or per write.
///
/// The descriptor is closed only by `SocketWatcher` (its poll thread), so no send can hit a reused descriptor
/// number; `shutdown()` works at once from any thread and is what the client notices as a hang-up.
final class AcquiredSocket: Sendable {
    private let descriptor: Mutex<Int32?>
    let id: Int

    private static let nextID = Atomic<Int>(1)

    private init(_ fd: Int32) {
        descriptor = Mutex(fd)
        id = Self.nextID.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// A connected pair: ours, and the client's end to send in the method reply (libdbus duplicates it; the
    /// original closes with the last reference).
    static func makePair() -> (ours: AcquiredSocket, theirs: UnixFileDescriptor)? {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { return nil }
        return (AcquiredSocket(fds[0]), UnixFileDescriptor(owning: fds[1]))
    }

    /// Sends one datagram; false when the socket is closed or full (the value is dropped, as bluetoothd drops it).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        descriptor.withLock { fd in
            guard let fd else { return false }
            return bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) } == bytes.count
        }
    }

    /// Hangs up both directions: the client's next poll sees HUP.
    func shutdown() {
        descriptor.withLock { fd in
            if let fd { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// The raw descriptor for polling; nil once closed.
    var rawDescriptor: Int32? { descriptor.withLock { $0 } }

    /// Reads one datagram; nil when nothing is waiting, empty when the peer closed.
    func receive() -> [UInt8]? {
        descriptor.withLock { fd -> [UInt8]? in
            guard let fd else { return [] }
            var buffer = [UInt8](repeating: 0, count: 600)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK ? nil : [] }
            return Array(buffer.prefix(count))
        }
    }

    /// Only `SocketWatcher` calls this.
    fileprivate func close() {
        descriptor.withLock { fd in
            if let descriptor = fd { Glibc.close(descriptor) }
            fd = nil
        }
    }
}

/// Watches every acquired socket on one thread: datagrams a client writes (AcquireWrite) and the hang-up when
/// the client closes its end, which is how BlueZ learns that a client released an acquired characteristic.
///
/// `@unchecked Sendable`: the registrations live behind a mutex; the poll set is confined to the thread.
final class SocketWatcher: @unchecked Sendable {
    struct Handlers: Sendable {
        var datagram: @Sendable ([UInt8]) -> Void
        var closed: @Sendable () -> Void
    }

    private let registrations = Mutex<[Int: (socket: AcquiredSocket, handlers: Handlers)]>([:])
    private let pendingCloses = Mutex<[AcquiredSocket]>([])
    /// Nil when no pipe could be made (out of descriptors): then nothing can be watched and Acquire* is refused.
    private let wakePipe: WakePipe?
    private let stopped = Atomic<Bool>(false)

    init() {
        wakePipe = try? WakePipe()
        guard let wakePipe else { return }
        let thread = Thread { [self] in run(wakePipe) }
        thread.name = "simulator-sockets"
        thread.start()
    }

    /// Whether sockets can be watched; AcquireWrite and AcquireNotify answer "Too many open files" otherwise.
    var canWatch: Bool { wakePipe != nil }

    func watch(_ socket: AcquiredSocket, handlers: Handlers) {
        registrations.withLock { $0[socket.id] = (socket, handlers) }
        wake()
    }

    /// Stops watching `socket`, hangs it up and closes it (on the watcher thread); no handler runs for it
    /// afterwards.
    func close(_ socket: AcquiredSocket) {
        socket.shutdown()
        _ = registrations.withLock { $0.removeValue(forKey: socket.id) }
        pendingCloses.withLock { $0.append(socket) }
        wake()
    }

    /// Closes every socket and ends the thread.
    func stop() {
        let all = registrations.withLock { all in defer { all.removeAll() }; return all.values.map(\.socket) }
        for socket in all { socket.shutdown() }
        pendingCloses.withLock { $0.append(contentsOf: all) }
        stopped.store(true, ordering: .relaxed)
        wake()
    }

    private func wake() { wakePipe?.wake() }

    private func run(_ wakePipe: WakePipe) {
        while true {
            for socket in pendingCloses.withLock({ list in defer { list.removeAll() }; return list }) { socket.close() }
            if stopped.load(ordering: .relaxed) { break }
            let watched = registrations.withLock { Array($0.values) }
            var descriptors = [wakePipe.pollDescriptor]
            var polled: [(socket: AcquiredSocket, handlers: Handlers)] = []
            for entry in watched {
                guard let fd = entry.socket.rawDescriptor else { continue }
                descriptors.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
                polled.append(entry)
            }
            _ = poll(&descriptors, nfds_t(descriptors.count), 1000)
            if descriptors[0].revents != 0 { wakePipe.drain() }
            for (index, entry) in polled.enumerated() {
                let revents = descriptors[index + 1].revents
                guard revents != 0 else { continue }
                // The socket may have been closed meanwhile; only registered ones are serviced.
                guard registrations.withLock({ $0[entry.socket.id] != nil }) else { continue }
                var hungUp = revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
                if revents & Int16(POLLIN) != 0 {
                    while let datagram = entry.socket.receive() {
                        if datagram.isEmpty { hungUp = true; break }
                        entry.handlers.datagram(datagram)
                    }
                }
                if hungUp {
                    _ = registrations.withLock { $0.removeValue(forKey: entry.socket.id) }
                    entry.socket.close()
                    entry.handlers.closed()
                }
            }
        }
        wakePipe.close()
    }
}
