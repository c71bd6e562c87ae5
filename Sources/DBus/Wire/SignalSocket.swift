#if canImport(Glibc)
import Glibc
#endif
import CDBus

/// A second connection to the bus that only receives signals, read without libdbus: BlueZ's StartNotify values.
///
/// Through libdbus each signal costs some 40,000 instructions before our code sees it — its reader's locks, its full
/// validation of every message, its dispatch — twice what the whole AcquireNotify path costs (issue 43). This socket
/// is opened for a few match rules, and what comes on it is read in bulk (`recv` into one buffer), framed by the fixed
/// header, and handed over in place (`WireMessage`): the lone value changes go straight to their watches, and only
/// what is left is given to libdbus to decode (`dbus_message_demarshal`). It sends nothing once it is open (no method
/// calls, no replies; closing it drops its rules at the bus).
///
/// Opening blocks (connect, the SASL handshake, Hello and one AddMatch per rule, answered within `timeout`), as
/// libdbus's own connection does. After that it belongs to one loop thread: `@unchecked Sendable` only to be handed
/// to that loop once, in `ConnectionLoop.Command.attachSignalSocket`.
public final class SignalSocket: @unchecked Sendable {
    public let descriptor: Int32
    let address: BusSocketAddress
    /// The bytes read and not yet handed over: `buffer[start..<filled]`.
    private var buffer: [UInt8]
    private var start = 0
    private var filled = 0

    /// What each read asks the kernel for at least; a message larger than the buffer grows it to fit.
    private static let readSize = 64 * 1024

    /// Takes `descriptor`, connected and authenticated (`open`; tests give it one end of a socket pair).
    init(descriptor: Int32, address: BusSocketAddress) {
        self.descriptor = descriptor
        self.address = address
        buffer = [UInt8](repeating: 0, count: 2 * Self.readSize)
    }

    deinit { close(descriptor) }

    /// Connects to the bus at `address` (a Unix socket, else it throws), authenticates, and adds `rules` at the bus;
    /// every signal matching them from then on arrives here.
    public static func open(_ address: BusAddress, rules: [MatchRule]) throws(BusError) -> SignalSocket {
        guard let socketAddress = BusSocketAddress.resolve(address, environment: { getenv($0).map { String(cString: $0) } }) else {
            throw .connectionFailed("the bus at \(address) is not on a Unix socket")
        }
        return try open(socketAddress, rules: rules)
    }

    static func open(_ address: BusSocketAddress, rules: [MatchRule], timeout: Duration = .seconds(5)) throws(BusError) -> SignalSocket {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .connectionFailed("socket: \(String(cString: strerror(errno)))") }
        let opened = SignalSocket(descriptor: descriptor, address: address)
        try opened.connect()
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        let deadline = ContinuousClock.now + timeout
        try opened.writeAll(BusAuthentication.request(userID: getuid()), before: deadline)
        try BusAuthentication.check(answer: opened.readLine(before: deadline))
        // Hello first (the bus drops a connection whose first call is anything else), then the rules.
        var calls: [(serial: UInt32, member: String)] = [(1, "Hello")]
        var outgoing = BusAuthentication.begin + (try methodCall("Hello", [], serial: 1))
        for (index, rule) in rules.enumerated() {
            let serial = UInt32(index + 2)
            calls.append((serial, "AddMatch"))
            outgoing += try methodCall("AddMatch", [.string(rule.description)], serial: serial)
        }
        try opened.writeAll(outgoing, before: deadline)
        try opened.awaitReplies(to: calls, before: deadline)
        return opened
    }

    /// Reads what waits, up to `rounds` reads, and hands each whole message to `each` in order; `each` answers
    /// false to stop (the stream is then broken). Throws when the bus closed the socket or it failed; answers whether
    /// bytes may still wait (the rounds ran out).
    public func receive(rounds: Int, _ each: (UnsafeRawBufferPointer) -> Bool) throws(BusError) -> Bool {
        for _ in 0..<rounds {
            try handOver(each)
            switch readOnce() {
            case .read: continue
            case .wouldBlock: return false
            case .closed: throw .disconnected
            case .failed(let code): throw .connectionFailed("reading the signal socket: \(String(cString: strerror(code)))")
            }
        }
        try handOver(each)
        return true
    }

    // MARK: Framing

    /// Hands over every whole message in the buffer.
    private func handOver(_ each: (UnsafeRawBufferPointer) -> Bool) throws(BusError) {
        while true {
            let outcome: Result<Int, WireMessageError>? = buffer.withUnsafeBytes { bytes in
                WireMessage.length(atStartOf: UnsafeRawBufferPointer(rebasing: bytes[start..<filled]))
            }
            switch outcome {
            case nil: return
            case .failure(let error)?: throw .connectionFailed("the signal socket's stream is broken: \(error)")
            case .success(let length)?:
                guard filled - start >= length else {
                    makeRoom(for: length)
                    return
                }
                let kept = buffer.withUnsafeBytes { bytes in each(UnsafeRawBufferPointer(rebasing: bytes[start..<start + length])) }
                guard kept else { throw .connectionFailed("a message on the signal socket could not be read") }
                start += length
                if start == filled { start = 0; filled = 0 }
            }
        }
    }

    /// Moves the unread bytes to the front when that frees room for a read, and grows the buffer when a message
    /// will not fit at all.
    private func makeRoom(for length: Int) {
        if start > 0, buffer.count - filled < Self.readSize || buffer.count - start < length {
            buffer.withUnsafeMutableBytes { bytes in
                _ = memmove(bytes.baseAddress!, bytes.baseAddress! + start, filled - start)
            }
            filled -= start
            start = 0
        }
        if buffer.count < length + Self.readSize {
            buffer.append(contentsOf: repeatElement(0, count: length + Self.readSize - buffer.count))
        }
    }

    private enum ReadOutcome { case read, wouldBlock, closed, failed(Int32) }

    private func readOnce() -> ReadOutcome {
        if buffer.count - filled < Self.readSize { makeRoom(for: filled - start) }
        while true {
            let count = buffer.withUnsafeMutableBytes { bytes in
                recv(descriptor, bytes.baseAddress! + filled, bytes.count - filled, Int32(MSG_DONTWAIT))
            }
            if count > 0 {
                filled += count
                return .read
            }
            if count == 0 { return .closed }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: return .failed(errno)
            }
        }
    }

    // MARK: Opening

    private func connect() throws(BusError) {
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        let name: [UInt8]
        switch address {
        case .path(let path): name = Array(path.utf8)
        case .abstract(let abstract): name = [0] + Array(abstract.utf8)
        }
        let capacity = MemoryLayout.size(ofValue: socketAddress.sun_path)
        guard name.count < capacity else { throw .connectionFailed("the bus address \(address) is too long") }
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { path in path.copyBytes(from: name) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + name.count + (name.first == 0 ? 0 : 1))
        let result = withUnsafePointer(to: &socketAddress) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, length) }
        }
        guard result == 0 else {
            throw .connectionFailed("cannot connect a signal socket to \(address): \(String(cString: strerror(errno)))")
        }
    }

    /// Waits until the socket is ready for `events` or the deadline passes.
    private func wait(for events: Int16, before deadline: ContinuousClock.Instant) throws(BusError) {
        let left = deadline - .now
        guard left > .zero else { throw .timeout(member: "opening the signal socket") }
        var descriptorEvents = pollfd(fd: descriptor, events: events, revents: 0)
        let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
        _ = poll(&descriptorEvents, 1, milliseconds)
    }

    private func writeAll(_ bytes: [UInt8], before deadline: ContinuousClock.Instant) throws(BusError) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if count > 0 {
                sent += count
            } else if count < 0, errno == EAGAIN || errno == EINTR {
                try wait(for: Int16(POLLOUT), before: deadline)
            } else {
                throw .connectionFailed("writing to the signal socket: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// One CR LF-terminated line of the handshake, without its CR LF. The server says nothing more until BEGIN, so
    /// nothing past the line is read.
    private func readLine(before deadline: ContinuousClock.Instant) throws(BusError) -> ArraySlice<UInt8> {
        while true {
            if let end = buffer[..<filled].firstIndex(of: UInt8(ascii: "\n")) {
                defer { start = 0; filled = 0 }
                guard end > 0, buffer[end - 1] == UInt8(ascii: "\r") else { throw .connectionFailed("a bad handshake line") }
                return buffer[..<(end - 1)]
            }
            guard filled < 16 * 1024 else { throw .connectionFailed("the bus's handshake line is too long") }
            try readWaiting(before: deadline)
        }
    }

    private func readWaiting(before deadline: ContinuousClock.Instant) throws(BusError) {
        switch readOnce() {
        case .read: return
        case .wouldBlock: try wait(for: Int16(POLLIN), before: deadline)
        case .closed: throw .connectionFailed("the bus closed the signal socket while it was being opened")
        case .failed(let code): throw .connectionFailed("reading the signal socket: \(String(cString: strerror(code)))")
        }
    }

    /// Reads until every call has its reply. Nothing is taken from the buffer: the loop reads all of it, signals that
    /// came meanwhile included, and drops the bus's answers and its NameAcquired (they match no rule).
    private func awaitReplies(to calls: [(serial: UInt32, member: String)], before deadline: ContinuousClock.Instant) throws(BusError) {
        var waiting = calls
        // Bytes past `start` already looked at (a read may move the unread bytes to the buffer's front).
        var examined = 0
        while !waiting.isEmpty {
            let offset = start + examined
            let outcome: Result<Int, WireMessageError>? = buffer.withUnsafeBytes { bytes in
                WireMessage.length(atStartOf: UnsafeRawBufferPointer(rebasing: bytes[offset..<filled]))
            }
            guard case .success(let length)? = outcome, filled - offset >= length else {
                if case .failure(let error)? = outcome { throw .connectionFailed("\(error)") }
                if case .success(let length)? = outcome { makeRoom(for: examined + length) }
                try readWaiting(before: deadline)
                continue
            }
            // nil: malformed; .some(nil): not an answer.
            let read: (serial: UInt32, error: String?)?? = buffer.withUnsafeBytes { bytes in
                guard let message = WireMessage(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length])) else {
                    return nil
                }
                switch message.type {
                case WireMessage.MessageType.methodReturn.rawValue:
                    return .some(message.replySerial.map { ($0, nil) })
                case WireMessage.MessageType.error.rawValue:
                    let name = message.errorName.map { String(decoding: $0, as: UTF8.self) } ?? "an error"
                    return .some(message.replySerial.map { ($0, name) })
                default:
                    return .some(nil)
                }
            }
            guard let answer = read else { throw .connectionFailed("the bus sent a malformed message") }
            if let answer, let index = waiting.firstIndex(where: { $0.serial == answer.serial }) {
                if let error = answer.error { throw .remote(name: error, message: "\(waiting[index].member) on the signal socket") }
                waiting.remove(at: index)
            }
            examined += length
        }
    }

    /// A method call to the bus, marshalled by libdbus.
    private static func methodCall(_ member: String, _ arguments: [DBusValue], serial: UInt32) throws(BusError) -> [UInt8] {
        guard let message = dbus_message_new_method_call("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                         "org.freedesktop.DBus", member) else {
            throw .invalidArguments("cannot build \(member)")
        }
        defer { dbus_message_unref(message) }
        guard MessageCoding.append(arguments, to: message) else { throw .invalidArguments("cannot encode \(member)'s arguments") }
        dbus_message_set_serial(message, serial)
        var marshalled: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(message, &marshalled, &length) != 0, let marshalled else {
            throw .invalidArguments("cannot marshal \(member)")
        }
        defer { dbus_free(marshalled) }
        return Array(UnsafeRawBufferPointer(start: marshalled, count: Int(length)))
    }
}
