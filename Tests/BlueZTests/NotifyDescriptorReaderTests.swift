#if canImport(Glibc)
import Glibc
#endif
@testable import BlueZ
import DBus
import EventLoop
import Synchronization
import Testing

/// The AcquireNotify socket reader: datagrams in batches of one `recvmmsg`, the end when BlueZ closes the socket.
@Suite("NotifyDescriptorReader")
struct NotifyDescriptorReaderTests {
    /// A SOCK_SEQPACKET pair like the one BlueZ hands out: (our end, BlueZ's end).
    func socketPair() -> (UnixFileDescriptor, Int32) {
        var fds: [Int32] = [-1, -1]
        precondition(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0)
        return (UnixFileDescriptor(owning: fds[0]), fds[1])
    }

    func send(_ fd: Int32, _ bytes: [UInt8]) {
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
        precondition(sent == bytes.count)
    }

    @Test("a burst larger than one batch arrives whole, in order, each datagram on its own; the peer's close ends it")
    func burstThenClose() async throws {
        let reader = try NotifyDescriptorReader(loop: nil)
        let (ours, theirs) = socketPair()
        // 40 datagrams (more than the 16 of one recvmmsg), of lengths 1…40 and up to the largest notification.
        var sent: [[UInt8]] = (1...40).map { length in (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ length) } }
        sent.append([UInt8](repeating: 0xA5, count: 514))
        for datagram in sent { send(theirs, datagram) }
        let received = Mutex<[[UInt8]]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            _ = reader.deliver(ours, handler: { value in received.withLock { $0.append(value) } },
                               ended: { done.resume() })
            close(theirs)
        }
        #expect(received.withLock { $0 } == sent)
    }

    @Test("a handler that cancels its delivery gets nothing more from the same batch")
    func cancelInsideABatch() async throws {
        let reader = try NotifyDescriptorReader(loop: nil)
        let (ours, theirs) = socketPair()
        defer { close(theirs) }
        let received = Mutex<[[UInt8]]>([])
        let delivery = Mutex<NotifyDescriptorReader.Delivery?>(nil)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let started = reader.deliver(ours, handler: { value in
                received.withLock { $0.append(value) }
                if value == [2] {
                    delivery.withLock { $0 }?.cancel()
                    reader.loop.execute { done.resume() }
                }
            }, ended: {})
            delivery.withLock { $0 = started }
            // Sent once the delivery is known to the handler: sent before, the loop could read the whole batch
            // before `started` was stored (seen with the full suite on two loaded cores), and cancel nothing.
            for index in 0..<10 { send(theirs, [UInt8(index)]) }
        }
        #expect(received.withLock { $0 } == [[0], [1], [2]])
    }
}
