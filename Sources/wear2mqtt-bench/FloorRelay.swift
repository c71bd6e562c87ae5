#if canImport(Glibc)
import Glibc
#endif
import CDBus
import CEpoll
import DBus

/// The floor relay's one thread (`FloorRelayCommand`): an `epoll` set of the notification sources, and per wake-up
/// every waiting notification read in as few calls as the kernel allows, and one `write` of all their
/// PUBLISH packets to the broker.
final class FloorRelay {
    struct Source {
        /// The Heart Rate Measurement characteristic's object path.
        var characteristic: String
        var topic: [UInt8]
    }

    /// The relay's private libdbus connection (`DBusConnection *`): AcquireNotify and StartNotify are owned by the
    /// connection that asked, so it stays open.
    private let bus: OpaquePointer
    /// The TCP socket to the broker, after CONNECT and CONNACK.
    private let broker: Int32
    private var sources: [Source] = []
    /// AcquireNotify: each source's socket, in `sources` order; empty with StartNotify.
    private var sockets: [Int32] = []
    /// StartNotify: the signals come on a socket read without libdbus, as the gateway's do (`SignalSocket`).
    private var signals: SignalSocket?
    /// StartNotify: the index in `sources` of each characteristic's object path, by a hash of the path's bytes (no
    /// String made per signal).
    private var sourcesByPathHash: [UInt64: Int] = [:]
    /// Each source's object path as bytes, in `sources` order.
    private var sourcePaths: [[UInt8]] = []
    private let busAddress: String
    private var batch = PublishBatch()

    private static let slots = 32
    private static let slotSize = 512
    private static let array = Int32(UInt8(ascii: "a")), unixFD = Int32(UInt8(ascii: "h"))

    init(bus address: String, brokerPort: Int) throws {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let connection = dbus_connection_open_private(address, &error), dbus_bus_register(connection, &error) != 0 else {
            throw BenchError("floor-relay: cannot open the bus: \(Self.text(error))")
        }
        dbus_connection_set_exit_on_disconnect(connection, 0)
        bus = connection
        busAddress = address
        broker = try Self.connectToBroker(port: brokerPort)
    }

    // MARK: Subscribing

    func subscribe(_ sources: [Source], acquire: Bool) throws {
        self.sources = sources
        if !acquire {
            // A precise rule per characteristic: the bus sends the socket their Value changes and nothing else.
            signals = try SignalSocket.open(.address(busAddress), rules: sources.map { source in
                MatchRule(sender: "org.bluez", path: ObjectPath(source.characteristic), interface: "org.freedesktop.DBus.Properties",
                          member: "PropertiesChanged", arg0: "org.bluez.GattCharacteristic1")
            })
            sourcePaths = sources.map { Array($0.characteristic.utf8) }
            for (index, path) in sourcePaths.enumerated() { sourcesByPathHash[Self.hash(path)] = index }
        }
        for source in sources {
            if acquire {
                let reply = try call(source.characteristic, "AcquireNotify", emptyOptions: true)
                defer { dbus_message_unref(reply) }
                var iterator = DBusMessageIter()
                var descriptor: Int32 = -1
                guard dbus_message_iter_init(reply, &iterator) != 0, dbus_message_iter_get_arg_type(&iterator) == Self.unixFD else {
                    throw BenchError("floor-relay: AcquireNotify answered no descriptor")
                }
                dbus_message_iter_get_basic(&iterator, &descriptor)
                _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
                sockets.append(descriptor)
            } else {
                dbus_message_unref(try call(source.characteristic, "StartNotify", emptyOptions: false))
            }
        }
    }

    /// A blocking method call on GattCharacteristic1 (setting up only); the reply, which the caller releases.
    private func call(_ path: String, _ member: String, emptyOptions: Bool) throws -> OpaquePointer {
        guard let message = dbus_message_new_method_call("org.bluez", path, "org.bluez.GattCharacteristic1", member) else {
            throw BenchError("floor-relay: out of memory")
        }
        defer { dbus_message_unref(message) }
        if emptyOptions {
            var iterator = DBusMessageIter(), dictionary = DBusMessageIter()
            dbus_message_iter_init_append(message, &iterator)
            dbus_message_iter_open_container(&iterator, Self.array, "{sv}", &dictionary)
            dbus_message_iter_close_container(&iterator, &dictionary)
        }
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let reply = dbus_connection_send_with_reply_and_block(bus, message, 30_000, &error) else {
            throw BenchError("floor-relay: \(member) on \(path): \(Self.text(error))")
        }
        return reply
    }

    // MARK: Relaying

    /// Relays until the process is killed. `coalescing`: interrupt moderation as the gateway's event loop does it
    /// (`EventLoop.coalescingWindow`): a wake-up within two windows of the last waits out the window before the next.
    func run(coalescing window: Duration) throws {
        let poll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard poll >= 0 else { throw BenchError("floor-relay: epoll_create1: errno \(errno)") }
        if let signals {
            try watch(signals.descriptor, id: UInt64.max, in: poll)
        } else {
            for (index, socket) in sockets.enumerated() { try watch(socket, id: UInt64(index), in: poll) }
        }
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        var datagrams = [UInt8](repeating: 0, count: Self.slots * Self.slotSize)
        var lengths = [Int32](repeating: 0, count: Self.slots)
        var lastWake: ContinuousClock.Instant?
        while true {
            let ready = epoll_wait(poll, &events, Int32(events.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                throw BenchError("floor-relay: epoll_wait: errno \(errno)")
            }
            let woke = window > .zero ? ContinuousClock.now : nil
            for index in 0..<Int(ready) {
                let id = events[index].data.u64
                if id == UInt64.max {
                    try readSignals()
                } else {
                    readNotifications(Int(id), into: &datagrams, lengths: &lengths)
                }
            }
            if batch.count > 0 {
                try send(batch.bytes)
                batch.removeAll()
            }
            if let woke {
                defer { lastWake = woke }
                if let lastWake, woke - lastWake < window * 2 {
                    let (seconds, attoseconds) = (woke + window - .now).components
                    var rest = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
                    if seconds >= 0, attoseconds > 50_000_000_000_000 { _ = nanosleep(&rest, nil) }
                }
            }
        }
    }

    private func watch(_ descriptor: Int32, id: UInt64, in poll: Int32) throws {
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: id))
        guard epoll_ctl(poll, EPOLL_CTL_ADD, descriptor, &event) == 0 else { throw BenchError("floor-relay: epoll_ctl: errno \(errno)") }
    }

    /// Every datagram waiting on one AcquireNotify socket, 32 per `recvmmsg`.
    private func readNotifications(_ index: Int, into datagrams: inout [UInt8], lengths: inout [Int32]) {
        let topic = sources[index].topic
        while true {
            let count = datagrams.withUnsafeMutableBufferPointer { buffer in
                lengths.withUnsafeMutableBufferPointer { lengths in
                    wear2mqtt_receive_datagrams(sockets[index], buffer.baseAddress, Int32(Self.slotSize), Int32(Self.slots), lengths.baseAddress)
                }
            }
            guard count > 0 else { return }
            datagrams.withUnsafeBytes { buffer in
                for slot in 0..<Int(count) {
                    batch.append(topic: topic, payload: UnsafeRawBufferPointer(rebasing: buffer[(slot * Self.slotSize)..<(slot * Self.slotSize + Int(lengths[slot]))]))
                }
            }
            if count < Self.slots { return }
        }
    }

    /// Every PropertiesChanged signal waiting on the signal socket, each Value's bytes read in place.
    private func readSignals() throws {
        guard let signals else { return }
        while try signals.receive(rounds: 32, { bytes in
            if let message = WireMessage(bytes), message.type == WireMessage.MessageType.signal.rawValue,
               let path = message.path, let index = sourcesByPathHash[Self.hash(path)],
               path.count == sourcePaths[index].count, memcmp(path.baseAddress!, sourcePaths[index], path.count) == 0,
               let change = LoneByteArrayChange(message) {
                batch.append(topic: sources[index].topic, payload: change.value)
            }
            return true
        }) {}
    }

    /// FNV-1a over a path's bytes.
    private static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    // MARK: The broker

    private func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let written = bytes.withUnsafeBytes { write(broker, $0.baseAddress! + sent, bytes.count - sent) }
            if written < 0 {
                if errno == EINTR { continue }
                throw BenchError("floor-relay: write to the broker: errno \(errno)")
            }
            sent += written
        }
    }

    private static func connectToBroker(port: Int) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw BenchError("floor-relay: socket: errno \(errno)") }
        var yes: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw BenchError("floor-relay: connect to the broker: errno \(errno)") }
        let hello = PublishBatch.connect(clientID: "wear2mqtt-bench-floor-\(getpid())")
        guard hello.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == hello.count else {
            throw BenchError("floor-relay: CONNECT not sent")
        }
        var acknowledgement = [UInt8](repeating: 0, count: 4)
        var received = 0
        while received < 4 {
            let count = acknowledgement.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + received, 4 - received) }
            guard count > 0 else { throw BenchError("floor-relay: no CONNACK") }
            received += count
        }
        guard acknowledgement[0] == 0x20, acknowledgement[3] == 0 else {
            throw BenchError("floor-relay: the broker refused the connection (\(acknowledgement))")
        }
        return descriptor
    }

    private static func text(_ error: CDBus.DBusError) -> String {
        error.message.map { String(cString: $0) } ?? "unknown error"
    }
}
