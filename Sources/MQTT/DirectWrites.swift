#if canImport(Glibc)
import Glibc
#endif

/// Sample packets `MosquittoConnection` sends itself (`PublishPacket`), in order, and how far the socket took them.
/// What a `send` leaves waits for the socket to be writable again; until all of it is out, libmosquitto writes
/// nothing, so none of its packets lands inside one of these. Confined to the connection's loop thread.
struct DirectWrites {
    private var bytes: [UInt8] = []
    private var sent = 0

    var isEmpty: Bool { sent == bytes.count }

    mutating func append(_ packet: PublishPacket) {
        packet.append(to: &bytes)
    }

    enum Outcome: Equatable {
        /// Everything is out.
        case sent
        /// The socket's buffer is full: the rest waits for it to be writable.
        case waiting
        /// The socket failed (the broker went): what was not sent is dropped, as libmosquitto drops QoS 0 packets
        /// it holds when its link goes; the read side reports the loss.
        case failed(errno: Int32)
    }

    /// One `send` of everything waiting (again, if interrupted).
    mutating func send(on socket: Int32) -> Outcome {
        while !isEmpty {
            let written = bytes.withUnsafeBytes { buffer in
                Glibc.send(socket, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if written >= 0 {
                sent += written
                continue
            }
            let error = errno
            if error == EINTR { continue }
            if error == EAGAIN || error == EWOULDBLOCK { return .waiting }
            discard()
            return .failed(errno: error)
        }
        empty()
        return .sent
    }

    /// The link went: the packets belong to a socket that is gone.
    mutating func discard() {
        empty()
    }

    private mutating func empty() {
        // The buffer is kept for the next iteration unless a backlog made it large.
        bytes.removeAll(keepingCapacity: bytes.capacity <= Self.keptCapacity)
        sent = 0
    }

    private static let keptCapacity = 256 * 1024
}
