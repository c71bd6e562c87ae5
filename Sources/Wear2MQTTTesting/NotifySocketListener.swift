#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// The service manager's end of `NOTIFY_SOCKET` for tests: a bound `AF_UNIX` datagram socket that keeps every
/// datagram the process under test sends (sd_notify(3)), either at a path in a temporary directory or under a unique
/// abstract name. Pass `notifySocket` as the child's `NOTIFY_SOCKET`.
public final class NotifySocketListener: Sendable {
    /// The value for `NOTIFY_SOCKET`: the path, or `@name` for an abstract socket.
    public let notifySocket: String
    private let descriptor: Int32
    private let received = Mutex<[String]>([])

    public struct Failure: Error, CustomStringConvertible {
        public let operation: String
        public let errno: Int32
        public var description: String { "\(operation): \(String(cString: strerror(errno)))" }
    }

    /// A socket at `path` (a file in a test's temporary directory).
    public convenience init(path: String) throws {
        try self.init(notifySocket: path, sunPath: Array(path.utf8) + [0])
    }

    /// An abstract socket named `@wear2mqtt-test-<uuid>`: no file, unique per test.
    public static func abstract() throws -> NotifySocketListener {
        let name = "wear2mqtt-test-\(UUID().uuidString)"
        return try NotifySocketListener(notifySocket: "@" + name, sunPath: [0] + Array(name.utf8))
    }

    private init(notifySocket: String, sunPath: [UInt8]) throws {
        self.notifySocket = notifySocket
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(operation: "socket", errno: errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: sunPath) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + sunPath.count)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else {
            let error = errno
            _ = close(descriptor)
            throw Failure(operation: "bind \(notifySocket)", errno: error)
        }
    }

    deinit { _ = close(descriptor) }

    /// Every datagram received so far, in order (what is waiting in the socket is read first).
    public var datagrams: [String] {
        received.withLock { received in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(descriptor, &buffer, buffer.count, 0)
                guard count >= 0 else { break }
                received.append(String(decoding: buffer[..<count], as: UTF8.self))
            }
            return received
        }
    }

    /// Every `KEY=value` line received so far, in order.
    public var assignments: [String] { datagrams.flatMap { $0.split(separator: "\n").map(String.init) } }

    /// Waits until `condition` holds for the assignments received so far; false if `timeout` (a guard against a
    /// test that would otherwise hang, not a measure) passes first.
    public func waitUntil(timeout: Duration = .seconds(60), _ condition: ([String]) -> Bool) async -> Bool {
        await eventually(timeout: timeout, interval: .milliseconds(20)) { condition(assignments) }
    }
}
