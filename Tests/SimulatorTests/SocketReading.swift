#if canImport(Glibc)
import Glibc
#endif
import DBus

/// One datagram from an acquired notify socket, or nil if none came in time.
func readDatagram(_ fd: UnixFileDescriptor, within timeout: Duration) async throws -> [UInt8]? {
    let deadline = ContinuousClock.now + timeout
    var buffer = [UInt8](repeating: 0, count: 600)
    while ContinuousClock.now < deadline {
        let count = buffer.withUnsafeMutableBytes { recv(fd.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count > 0 { return Array(buffer.prefix(count)) }
        if count == 0 { return nil }
        try await Task.sleep(for: .milliseconds(5))
    }
    return nil
}

/// Whether the peer hung up: reads reach end of file (after any datagrams still queued).
func socketClosed(_ fd: UnixFileDescriptor, within timeout: Duration) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    var buffer = [UInt8](repeating: 0, count: 600)
    while ContinuousClock.now < deadline {
        let count = buffer.withUnsafeMutableBytes { recv(fd.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count == 0 { return true }
        if count < 0 && errno != EAGAIN && errno != EWOULDBLOCK { return true }
        if count < 0 { try? await Task.sleep(for: .milliseconds(5)) }
    }
    return false
}
