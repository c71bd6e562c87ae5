#if canImport(Glibc)
import Glibc
#endif
import CEpoll
import DBus
import EventLoop
import FoundationEssentials
import Synchronization

/// Reads the notification sockets that AcquireNotify hands out, on an `EventLoop`: each socket is registered with
/// the loop's epoll, and every datagram (one notification) goes to its handler on the loop thread — in the daemon
/// the same loop that publishes to the broker, so a sample is read, decoded and published without a hand-off.
///
/// The readers' table and the receive buffers belong to the loop thread: they are `LoopBound`, so debug builds trap
/// on a touch from anywhere else.
final class NotifyDescriptorReader: Sendable {
    /// One socket being read: created anywhere, then its handlers and registration touched on the loop only.
    private final class Reader: Sendable {
        struct State {
            /// Emptied when the delivery ends, so that a handler holding its own `Delivery` (which holds this
            /// reader) makes no cycle that outlives it.
            var handler: @Sendable ([UInt8]) -> Void
            var ended: @Sendable () -> Void
            var registration: EventLoop.Registration?
        }

        let fd: UnixFileDescriptor
        let state: LoopBound<State>

        init(fd: UnixFileDescriptor, loop: EventLoop, handler: @escaping @Sendable ([UInt8]) -> Void,
             ended: @escaping @Sendable () -> Void) {
            self.fd = fd
            state = LoopBound(State(handler: handler, ended: ended), loop: loop)
        }

        func forgetHandlers() {
            state.value.handler = { _ in }
            state.value.ended = {}
        }
    }

    /// Stops one delivery (from any thread); closing the descriptor tells BlueZ to stop notifying.
    struct Delivery: Sendable {
        fileprivate let cancelOnLoop: @Sendable () -> Void
        func cancel() { cancelOnLoop() }
    }

    /// Room for `slots` datagrams of `slotSize` bytes, read in one `recvmmsg`. A notification is at most the
    /// ATT MTU (517) less 3 bytes.
    private struct ReceiveBuffers {
        static let slots = 16
        static let slotSize = 1024
        var buffer = [UInt8](repeating: 0, count: slots * slotSize)
        var lengths = [Int32](repeating: 0, count: slots)
        /// The value handed to a handler, refilled for each datagram: a handler that only decodes it leaves its
        /// buffer to be reused, so a notification costs no allocation; one that keeps it (a stream) keeps its own
        /// copy, since refilling a shared buffer copies it first.
        var datagram: [UInt8] = []

        /// The datagrams waiting on `fd`, up to `slots`, in one system call.
        mutating func receive(from fd: Int32) -> Int32 {
            buffer.withUnsafeMutableBufferPointer { bytes in
                wear2mqtt_receive_datagrams(fd, bytes.baseAddress, Int32(Self.slotSize), Int32(Self.slots), &lengths)
            }
        }

        /// The `index`th datagram of the last `receive`.
        mutating func datagram(_ index: Int) -> [UInt8] {
            let start = index * Self.slotSize
            datagram.removeAll(keepingCapacity: true)
            datagram.append(contentsOf: buffer[start..<start + Int(lengths[index])])
            return datagram
        }
    }

    let loop: EventLoop
    private let ownsLoop: Bool
    private let started = Mutex(false)
    private let readers: LoopBound<[Int32: Reader]>
    private let buffers: LoopBound<ReceiveBuffers>

    /// `loop` nil: a loop of its own, started with the first socket.
    init(loop: EventLoop?) throws(EventLoop.Failure) {
        if let loop {
            self.loop = loop
            ownsLoop = false
        } else {
            self.loop = try EventLoop(name: "bluez-notify")
            ownsLoop = true
        }
        readers = LoopBound([:], loop: self.loop)
        buffers = LoopBound(ReceiveBuffers(), loop: self.loop)
    }

    deinit {
        if ownsLoop, started.withLock({ $0 }) { loop.stop() }
    }

    /// Calls `handler` on the loop thread with every datagram arriving on `fd`, until the other side closes it
    /// (BlueZ does when the link drops; then `ended` is called) or `Delivery.cancel()` (then we close it).
    func deliver(_ fd: UnixFileDescriptor, handler: @escaping @Sendable ([UInt8]) -> Void,
                 ended: @escaping @Sendable () -> Void) -> Delivery {
        _ = fcntl(fd.rawValue, F_SETFL, fcntl(fd.rawValue, F_GETFL) | O_NONBLOCK)
        if ownsLoop, started.withLock({ value in defer { value = true }; return !value }) { loop.start() }
        let reader = Reader(fd: fd, loop: loop, handler: handler, ended: ended)
        onLoop { [self] in add(reader) }
        return Delivery { [self] in onLoop { [self] in remove(reader, notify: false) } }
    }

    /// The datagrams of `fd` as a stream, for consumers that await them (a session's first values, tests).
    func stream(_ fd: UnixFileDescriptor) -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(4096))
        let delivery = deliver(fd, handler: { continuation.yield($0) }, ended: { continuation.finish() })
        continuation.onTermination = { _ in delivery.cancel() }
        return stream
    }

    /// Runs `work` on the loop: now when already there, else as a task.
    private func onLoop(_ work: @escaping @Sendable () -> Void) {
        if loop.inEventLoop { work() } else { loop.execute(work) }
    }

    // MARK: On the loop thread

    private func add(_ reader: Reader) {
        do {
            // Strong: a registered socket keeps its reader alive until it is removed, as the reader thread did.
            reader.state.value.registration = try loop.register(reader.fd.rawValue, interest: .readable) { [self] readiness in
                read(reader, readiness)
            }
            readers.value[reader.fd.rawValue] = reader
        } catch {
            // Out of epoll resources: the subscription ends at once, and its owner subscribes again.
            reader.state.value.ended()
        }
    }

    private func remove(_ reader: Reader, notify: Bool) {
        guard let registration = reader.state.value.registration, readers.value[reader.fd.rawValue] === reader else { return }
        loop.deregister(registration)
        reader.state.value.registration = nil
        // Dropping the last reference to the descriptor closes it.
        readers.value[reader.fd.rawValue] = nil
        if notify { reader.state.value.ended() }
        reader.forgetHandlers()
    }

    /// The datagrams waiting, in one system call (a burst costs one wake-up and one read; fewer than a full
    /// batch means the socket is drained, so no read ends in EAGAIN); the end when the peer closed the socket.
    private func read(_ reader: Reader, _ readiness: EventLoop.Readiness) {
        var ended = false
        // Read once a wake-up: only a cancellation replaces it, and that ends the delivery (checked after each call).
        let handler = reader.state.value.handler
        while true {
            let count = buffers.value.receive(from: reader.fd.rawValue)
            if count > 0 {
                for index in 0..<Int(count) {
                    // Neither box is held while the handler runs: it may cancel this delivery (`remove`).
                    handler(buffers.value.datagram(index))
                    if reader.state.value.registration == nil { return }  // the handler cancelled it
                }
                if count == ReceiveBuffers.slots { continue }
                break
            }
            if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) { ended = true }
            break
        }
        if ended || (readiness.isHangUp && !readiness.isReadable) { remove(reader, notify: true) }
    }
}
