#if canImport(Glibc)
import Glibc
#endif
import EventLoop

/// The gateway's connection to one ESPHome Bluetooth proxy, on the data-path event loop (no thread per proxy): it
/// resolves the host, connects, speaks `APIClientStateMachine`, pings every keep-alive interval, and reconnects with
/// `ReconnectBackoff` whenever the connection ends — forever, until `stop`. What happens is told to `onEvent` on the
/// loop's thread, so a radio built on it handles advertisements without a hop.
public final class ProxyClient: Sendable {
    public struct Settings: Sendable {
        public var name: String
        public var host: String
        public var port: Int
        public var key: [UInt8]?
        public var clientInfo = "wear2mqtt"
        public var keepAlive: Duration = .seconds(20)
        public var backoff = ReconnectBackoff()
        /// A connect (TCP and handshake) taking longer than this is abandoned.
        public var connectTimeout: Duration = .seconds(10)

        public init(name: String, host: String, port: Int = 6053, key: [UInt8]? = nil) {
            self.name = name
            self.host = host
            self.port = port
            self.key = key
        }
    }

    public enum Event: Sendable, Equatable {
        case ready(APIClientStateMachine.ProxyIdentity)
        case message(APIMessage)
        /// The connection ended (or an attempt failed); the next attempt comes after `retryIn`.
        case disconnected(reason: String, retryIn: Duration)
    }

    /// Loop-confined: the socket, its registration, the protocol state, what waits to be written.
    struct Connection {
        var descriptor: Int32 = -1
        var registration: EventLoop.Registration?
        var machine: APIClientStateMachine
        var pending: [UInt8] = []
        var connected = false
        var timers: [TimerQueue<() -> Void>.ID] = []
    }

    struct State {
        var connection: Connection?
        var backoff: ReconnectBackoff
        var stopped = false
        /// Counts attempts, so a late timer of an old attempt does nothing.
        var attempt = 0
    }

    public let settings: Settings
    private let loop: EventLoop
    private let onEvent: @Sendable (Event) -> Void
    private let state: LoopBound<State>

    public init(_ settings: Settings, loop: EventLoop, onEvent: @escaping @Sendable (Event) -> Void) {
        self.settings = settings
        self.loop = loop
        self.onEvent = onEvent
        state = LoopBound(State(backoff: settings.backoff), loop: loop)
    }

    public func start() {
        loop.execute { [self] in attempt() }
    }

    /// Ends the connection (a polite disconnect when ready) and stops reconnecting.
    public func stop() {
        loop.execute { [self] in
            state.value.stopped = true
            if var connection = state.value.connection {
                let actions = connection.machine.disconnect()
                state.value.connection = connection
                perform(actions)
                flush()
            }
            close(reason: nil)
        }
    }

    /// Drops the connection and connects again at once (the radio watchdog's step for a proxy gone quiet).
    public func reconnect(reason: String) {
        loop.execute { [self] in
            guard !state.value.stopped else { return }
            if state.value.connection != nil {
                close(reason: reason)
                onEvent(.disconnected(reason: reason, retryIn: .zero))
            }
            // A retry already scheduled belongs to an earlier attempt and is ignored.
            attempt()
        }
    }

    /// A message for the proxy; dropped unless the connection is ready (the radio asks again after a reconnect).
    public func send(_ message: APIMessage) {
        loop.execute { [self] in
            guard state.value.connection != nil else { return }
            let actions = state.value.connection!.machine.send(message)
            perform(actions)
        }
    }

    // MARK: On the loop

    private func attempt() {
        guard !state.value.stopped, state.value.connection == nil else { return }
        state.value.attempt += 1
        let attempt = state.value.attempt
        let host = settings.host, port = settings.port
        // getaddrinfo blocks (DNS, mDNS for .local): off the loop, then back to it.
        Task.detached { [self] in
            let resolved = Self.resolve(host, port: port)
            loop.execute { [self] in connect(to: resolved, attempt: attempt) }
        }
    }

    private func connect(to resolved: Result<(family: Int32, address: [UInt8]), ResolveFailure>, attempt: Int) {
        guard !state.value.stopped, attempt == state.value.attempt else { return }
        let target: (family: Int32, address: [UInt8])
        switch resolved {
        case .success(let value): target = value
        case .failure(let failure): return retry(after: "cannot resolve \(settings.host): \(failure.reason)")
        }
        let descriptor = socket(target.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return retry(after: "socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let result = target.address.withUnsafeBytes { raw in
            Glibc.connect(descriptor, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        guard result == 0 || errno == EINPROGRESS else {
            let reason = String(cString: strerror(errno))
            Glibc.close(descriptor)
            return retry(after: "cannot connect to \(settings.host):\(settings.port): \(reason)")
        }
        var connection = Connection(descriptor: descriptor,
                                    machine: APIClientStateMachine(key: settings.key, clientInfo: settings.clientInfo))
        do {
            connection.registration = try loop.register(descriptor, interest: [.readable, .writable]) { [self] readiness in
                ready(readiness, attempt: attempt)
            }
        } catch {
            Glibc.close(descriptor)
            return retry(after: "\(error)")
        }
        // The whole connect, handshake included, within the timeout.
        connection.timers.append(loop.schedule(at: .now + settings.connectTimeout) { [self] in
            guard attempt == state.value.attempt, let connection = state.value.connection, !connection.machine.isReady else { return }
            retry(after: "no answer from \(settings.host):\(settings.port) within \(settings.connectTimeout)")
        })
        state.value.connection = connection
    }

    private func ready(_ readiness: EventLoop.Readiness, attempt: Int) {
        guard attempt == state.value.attempt, let connection = state.value.connection else { return }
        if !connection.connected {
            guard readiness.isWritable || readiness.isHangUp else { return }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(connection.descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
            guard error == 0 else {
                return retry(after: "cannot connect to \(settings.host):\(settings.port): \(String(cString: strerror(error)))")
            }
            state.value.connection!.connected = true
            perform(state.value.connection!.machine.start())
            scheduleKeepAlive(attempt: attempt)
        }
        if readiness.isReadable {
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while state.value.connection != nil, attempt == state.value.attempt {
                let count = read(connection.descriptor, &buffer, buffer.count)
                if count > 0 {
                    perform(state.value.connection!.machine.received(Array(buffer[..<count])))
                    continue
                }
                if count == 0 { return retry(after: "the proxy closed the connection") }
                if errno == EAGAIN || errno == EWOULDBLOCK { break }
                return retry(after: "reading from the proxy: \(String(cString: strerror(errno)))")
            }
        }
        guard attempt == state.value.attempt, state.value.connection != nil else { return }
        flush()
    }

    private func scheduleKeepAlive(attempt: Int) {
        let timer = loop.schedule(at: .now + settings.keepAlive) { [self] in
            guard attempt == state.value.attempt, state.value.connection != nil else { return }
            perform(state.value.connection!.machine.keepAliveTick())
            if attempt == state.value.attempt, state.value.connection != nil { scheduleKeepAlive(attempt: attempt) }
        }
        state.value.connection?.timers.append(timer)
    }

    private func perform(_ actions: [APIClientStateMachine.Action]) {
        for action in actions {
            switch action {
            case .write(let bytes):
                state.value.connection?.pending += bytes
            case .ready(let identity):
                state.value.backoff.succeeded()
                onEvent(.ready(identity))
            case .deliver(let message):
                onEvent(.message(message))
            case .close(let error):
                flush()
                return retry(after: error.description)
            }
        }
        flush()
    }

    private func flush() {
        guard let connection = state.value.connection, connection.connected, let registration = connection.registration else { return }
        var rest = connection.pending
        while !rest.isEmpty {
            let written = rest.withUnsafeBytes { write(connection.descriptor, $0.baseAddress, $0.count) }
            if written > 0 { rest.removeFirst(written); continue }
            if written < 0, errno == EAGAIN || errno == EWOULDBLOCK { break }
            return retry(after: "writing to the proxy: \(String(cString: strerror(errno)))")
        }
        state.value.connection?.pending = rest
        loop.setInterest(registration, rest.isEmpty ? .readable : [.readable, .writable])
    }

    /// Ends this attempt's socket and, unless stopped, schedules the next attempt.
    private func retry(after reason: String) {
        close(reason: reason)
        guard !state.value.stopped else { return }
        let delay = state.value.backoff.failed()
        onEvent(.disconnected(reason: reason, retryIn: delay))
        let attempt = state.value.attempt
        loop.schedule(at: .now + delay) { [self] in
            guard attempt == state.value.attempt else { return }
            self.attempt()
        }
    }

    private func close(reason: String?) {
        guard let connection = state.value.connection else { return }
        for timer in connection.timers { loop.cancel(timer) }
        if let registration = connection.registration { loop.deregister(registration) }
        if connection.descriptor >= 0 { Glibc.close(connection.descriptor) }
        state.value.connection = nil
    }

    struct ResolveFailure: Error { var reason: String }

    /// The first address `host` resolves to, as a `sockaddr` of its family.
    private static func resolve(_ host: String, port: Int) -> Result<(family: Int32, address: [UInt8]), ResolveFailure> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, "\(port)", &hints, &list)
        guard status == 0, let first = list else { return .failure(ResolveFailure(reason: String(cString: gai_strerror(status)))) }
        defer { freeaddrinfo(list) }
        let bytes = Array(UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen)))
        return .success((first.pointee.ai_family, bytes))
    }
}
