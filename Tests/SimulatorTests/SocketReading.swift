#if canImport(Glibc)
import Glibc
#endif
import DBus
import Dispatch

/// One datagram from an acquired notify socket, or nil if none came in time (or the peer hung up first).
func readDatagram(_ fd: UnixFileDescriptor, within timeout: Duration) async throws -> [UInt8]? {
    let deadline = ContinuousClock.now + timeout
    var buffer = [UInt8](repeating: 0, count: 600)
    repeat {
        let count = buffer.withUnsafeMutableBytes { recv(fd.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count > 0 { return Array(buffer.prefix(count)) }
        if count == 0 { return nil }
    } while await readable(fd, until: deadline)
    return nil
}

/// Whether the peer hung up: reads reach end of file (after any datagrams still queued).
func socketClosed(_ fd: UnixFileDescriptor, within timeout: Duration) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    var buffer = [UInt8](repeating: 0, count: 600)
    repeat {
        let count = buffer.withUnsafeMutableBytes { recv(fd.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count == 0 { return true }
        if count < 0 && errno != EAGAIN && errno != EWOULDBLOCK { return true }
        if count > 0 { continue }
    } while await readable(fd, until: deadline)
    return false
}

/// Waits in the kernel until `fd` has something to read or hung up (true), or `deadline` passes (false): `poll` on a
/// Dispatch thread, so no task of the pool the simulator runs on is held. A signal that interrupts the poll (a child
/// of another test exiting: SIGCHLD) is not an answer: it polls again for what is left.
private func readable(_ fd: UnixFileDescriptor, until deadline: ContinuousClock.Instant) async -> Bool {
    let raw = fd.rawValue
    return await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            while true {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { return continuation.resume(returning: false) }
                let milliseconds = Int32(clamping: left.components.seconds * 1000
                                         + left.components.attoseconds / 1_000_000_000_000_000 + 1)
                var entry = pollfd(fd: raw, events: Int16(POLLIN), revents: 0)
                let ready = poll(&entry, 1, milliseconds)
                if ready < 0 && errno == EINTR { continue }
                return continuation.resume(returning: ready > 0)
            }
        }
    }
}
