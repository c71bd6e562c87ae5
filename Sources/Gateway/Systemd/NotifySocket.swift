#if canImport(Glibc)
import Glibc
#endif

/// The client end of `$NOTIFY_SOCKET`, sd_notify(3) without libsystemd: one `AF_UNIX` datagram socket, a datagram
/// per `send`. It never blocks its caller (`MSG_DONTWAIT`: a full receive queue drops the datagram, which the next
/// status or ping makes good), and it changes nothing in the environment (sd_notify's `unset_environment` is not
/// offered: the daemon starts no children that could inherit the socket).
///
/// Sendable without a lock: the descriptor and the address never change, and datagram sends from several threads
/// do not interleave.
public final class NotifySocket: Sendable {
    private let descriptor: Int32
    private let address: NotifySocketAddress

    /// Nil when `NOTIFY_SOCKET` is unset (not started by systemd, or not `Type=notify`), names no socket this client
    /// speaks to, or no socket can be made.
    public convenience init?(environment: [String: String]) {
        guard let value = environment["NOTIFY_SOCKET"], let address = NotifySocketAddress(value) else { return nil }
        self.init(address: address)
    }

    init?(address: NotifySocketAddress) {
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
        self.address = address
    }

    deinit { _ = close(descriptor) }

    /// Sends `notifications` as one datagram. Answers the errno of a failure other than a full queue (`EAGAIN`),
    /// nil when sent or dropped for that.
    @discardableResult
    public func send(_ notifications: [SystemdNotification]) -> Int32? {
        guard !notifications.isEmpty else { return nil }
        let text = Array(SystemdNotification.message(notifications).utf8)
        var storage = sockaddr_un()
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { path in
            path.copyBytes(from: address.path)
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + address.length)
        while true {
            let sent = text.withUnsafeBytes { bytes in
                withUnsafePointer(to: &storage) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                        sendto(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL),
                               socketAddress, length)
                    }
                }
            }
            if sent >= 0 { return nil }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return nil
            case let error: return error
            }
        }
    }
}

/// `NOTIFY_SOCKET`'s value as a `sun_path`: a filesystem path (`/run/systemd/notify`), or an abstract name when it
/// starts with `@` (the `@` becomes the leading NUL byte). Other forms systemd knows (`vsock:`) are not supported.
struct NotifySocketAddress: Equatable {
    /// The bytes of `sun_path`, NUL-terminated for a path; an abstract name is not terminated (its length counts).
    let path: [UInt8]
    /// How many bytes of `sun_path` the address uses.
    var length: Int { path.count }

    init?(_ value: String) {
        var bytes = Array(value.utf8)
        guard bytes.count >= 2, !bytes.contains(0) else { return nil }
        switch bytes[0] {
        case UInt8(ascii: "/"): bytes.append(0)
        case UInt8(ascii: "@"): bytes[0] = 0
        default: return nil
        }
        guard bytes.count <= MemoryLayout.size(ofValue: sockaddr_un().sun_path) else { return nil }
        path = bytes
    }
}
