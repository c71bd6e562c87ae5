#if canImport(Glibc)
import Glibc
#endif
import ESPHome
import EventLoop
import Synchronization

/// The simulator's ESPHome Bluetooth proxy: ESPHome's native API on a TCP port, served on one event loop (no thread
/// per client), each connection an `APIServerStateMachine` with the proxy's identity and key. What a connection asks of
/// the proxy's Bluetooth side goes to `radio` (`ProxyRadio`: the scenario's devices, hosted in this process, with no
/// D-Bus), which answers through the connections.
public final class SimulatedProxyServer: Sendable {
    public struct Settings: Sendable {
        public var host = "127.0.0.1"
        public var port: Int
        public var name = "wear2mqtt-sim-proxy"
        public var macAddress = "AA:BB:CC:00:42:01"
        /// The 32-byte `api.encryption.key`; nil serves plaintext.
        public var key: [UInt8]?
        /// Active connections the proxy can hold (an ESP32 has 3 by default).
        public var slots = 3
        /// The devices in the proxy's range, as `wear2mqtt-sim run` simulates them; nil: none.
        public var scenario: Scenario?

        public init(port: Int) { self.port = port }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    private let settings: Settings
    private let loop: EventLoop
    private let listener: Int32
    /// Per connection, by descriptor; touched on the loop thread only.
    private let connections = Mutex<[Int32: ProxyConnection]>([:])
    private let radio: ProxyRadio

    public init(_ settings: Settings) throws {
        self.settings = settings
        loop = try EventLoop(name: "esphome-proxy")
        var devices: [ProxiedDevice] = []
        for (index, device) in (settings.scenario?.devices ?? []).enumerated() {
            devices.append(try ProxiedDevice(settings: device, index: index, scenarioSeed: settings.scenario?.seed ?? 1))
        }
        var radioSettings = ProxyRadio.Settings()
        if let scenario = settings.scenario { radioSettings.connectTimeout = scenario.adapter.connectTimeout }
        radio = ProxyRadio(devices: devices, slots: settings.slots, settings: radioSettings, loop: loop)
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(settings.port).bigEndian)
        guard inet_pton(AF_INET, settings.host, &address.sin_addr) == 1 else {
            close(listener)
            throw Failure(description: "\(settings.host) is not an IPv4 address")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            close(listener)
            throw Failure(description: "cannot listen on \(settings.host):\(settings.port): \(reason)")
        }
    }

    /// Serves until `stop`.
    public func start() {
        radio.attach { [weak self] descriptor, message in self?.perform(descriptor) { $0.machine.send(message) } }
        loop.start()
        loop.execute { [self] in
            _ = try? loop.register(listener, interest: .readable) { [self] _ in accept() }
        }
    }

    public func stop() {
        loop.execute { [radio] in radio.shutDown() }
        loop.stop()
        connections.withLock { all in
            for descriptor in all.keys { close(descriptor) }
            all.removeAll()
        }
        close(listener)
    }

    /// Every device walks out of the proxy's range: links dropped with a supervision timeout's 0x08, no advertisements,
    /// connects failing as for a device not heard (`ProxyRadio.walkOutOfRange`). From any thread.
    public func walkOutOfRange() {
        loop.execute { [radio] in radio.walkOutOfRange() }
    }

    /// The devices are back: advertising resumes; links are not restored. From any thread.
    public func walkBackIntoRange() {
        loop.execute { [radio] in radio.walkBackIntoRange() }
    }

    private func accept() {
        while true {
            let descriptor = Glibc.accept(listener, nil, nil)
            guard descriptor >= 0 else { return }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            var one: Int32 = 1
            setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            var info = DeviceInfoResponse()
            info.name = settings.name
            info.friendlyName = settings.name
            info.macAddress = settings.macAddress
            info.bluetoothMacAddress = settings.macAddress
            info.esphomeVersion = "2026.11.0"
            info.model = "esp32dev (wear2mqtt-sim)"
            info.manufacturer = "Espressif"
            info.apiEncryptionSupported = true
            info.bluetoothProxyFeatureFlags = ([.passiveScan, .activeConnections, .remoteCaching, .pairing, .cacheClearing,
                                                .rawAdvertisements] as BluetoothProxyFeatures).rawValue
            guard let machine = try? APIServerStateMachine(key: settings.key, deviceInfo: info),
                  let registration = try? loop.register(descriptor, interest: .readable, { [self] readiness in
                      serve(descriptor, readiness)
                  }) else {
                close(descriptor)
                continue
            }
            connections.withLock { $0[descriptor] = ProxyConnection(machine: machine, registration: registration) }
        }
    }

    private func serve(_ descriptor: Int32, _ readiness: EventLoop.Readiness) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        if readiness.isReadable {
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                if count > 0 {
                    perform(descriptor) { $0.machine.received(Array(buffer[..<count])) }
                    continue
                }
                if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { return drop(descriptor) }
                break
            }
        }
        if readiness.isWritable { flush(descriptor) }
        if readiness.isHangUp, !readiness.isReadable { drop(descriptor) }
    }

    /// Runs `step` on the connection's state machine and carries out its actions.
    private func perform(_ descriptor: Int32, _ step: (inout ProxyConnection) -> [APIServerStateMachine.Action]) {
        let actions: [APIServerStateMachine.Action] = connections.withLock { all in
            guard var connection = all[descriptor] else { return [] }
            defer { all[descriptor] = connection }
            return step(&connection)
        }
        for action in actions {
            switch action {
            case .write(let bytes):
                connections.withLock { $0[descriptor]?.pending += bytes }
                flush(descriptor)
            case .clientHello:
                break
            case .deliver(let message):
                answer(message, on: descriptor)
            case .close:
                // What was written before the refusal (a Handshake MAC failure) goes out first.
                flush(descriptor)
                drop(descriptor)
                return
            }
        }
    }

    private func answer(_ message: APIMessage, on descriptor: Int32) {
        radio.handle(message, from: descriptor)
    }

    private func flush(_ descriptor: Int32) {
        let (pending, registration) = connections.withLock { ($0[descriptor]?.pending ?? [], $0[descriptor]?.registration) }
        guard let registration, !pending.isEmpty else { return }
        let written = pending.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written < 0, errno != EAGAIN, errno != EWOULDBLOCK { return drop(descriptor) }
        let sent = max(0, written)
        let rest = connections.withLock { all -> Int in
            all[descriptor]?.pending.removeFirst(sent)
            return all[descriptor]?.pending.count ?? 0
        }
        loop.setInterest(registration, rest > 0 ? [.readable, .writable] : .readable)
    }

    private func drop(_ descriptor: Int32) {
        guard let connection = connections.withLock({ $0.removeValue(forKey: descriptor) }) else { return }
        loop.deregister(connection.registration)
        close(descriptor)
        radio.clientLeft(descriptor)
    }
}

/// One client of the simulated proxy.
struct ProxyConnection: Sendable {
    var machine: APIServerStateMachine
    let registration: EventLoop.Registration
    /// Bytes the socket has not taken yet.
    var pending: [UInt8] = []
}
