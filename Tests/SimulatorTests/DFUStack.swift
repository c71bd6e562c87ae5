import BlueZ
import DBus
import Simulator
import Synchronization
import Testing
import Wear2MQTTTesting
@testable import Wearables
@testable import Firmware

/// A Care-Xc band on a private bus with the simulator, the BlueZ client the gateway uses, and the control
/// interface: everything a firmware update goes through except the gateway, whose part a pure DFU client plays.
struct DFUStack {
    static let band = "C0:F1:70:00:00:01"
    static let bootloader = "C0:F1:70:00:00:02"

    let daemon: DBusDaemon
    let simulator: BlueZSimulator
    let bluez: BlueZClient
    let control: SimulatorControlClient
    /// Told of every change of the BlueZ client's model: what the waits below re-check on.
    let changes: ChangeNotifier
    private let modelEvents: Task<Void, Never>

    init(daemon: DBusDaemon, simulator: BlueZSimulator, bluez: BlueZClient, control: SimulatorControlClient) {
        self.daemon = daemon
        self.simulator = simulator
        self.bluez = bluez
        self.control = control
        let changes = ChangeNotifier()
        self.changes = changes
        let events = bluez.events()
        modelEvents = Task {
            for await _ in events { changes.changed() }
        }
    }

    /// The band with fast timers; `options` go into its options mapping.
    static func scenario(options: String) -> String {
        """
        seed: 5
        adapter:
          address: "00:1A:7D:DA:71:13"
          disconnect_timer: 50ms
        devices:
          - kind: gofit_care_xc
            address: \(band)
            advertising_interval: 50ms
            connect_delay: 20ms
            service_discovery_time: 20ms
            att_round_trip: 2ms
            options: { history_days: 0\(options.isEmpty ? "" : ", " + options) }
        """
    }

    /// Runs `body` with a started stack and stops it (simulator, client, bus daemon) however `body` ends.
    static func with(options: String = "", _ body: (DFUStack) async throws -> Void) async throws {
        let daemon = try await DBusDaemon()
        let simulator: BlueZSimulator
        do {
            simulator = try await BlueZSimulator.start(try ScenarioLoader.load(yaml: scenario(options: options)),
                                                       on: .address(daemon.address))
        } catch {
            await daemon.stop()
            throw error
        }
        let stack = DFUStack(daemon: daemon, simulator: simulator,
                             bluez: BlueZClient(connection: try BusConnection(.address(daemon.address))),
                             control: SimulatorControlClient(bus: try BusConnection(.address(daemon.address))))
        do {
            try await stack.bluez.start()
            try await body(stack)
        } catch {
            await stack.stop()
            throw error
        }
        await stack.stop()
    }

    func stop() async {
        modelEvents.cancel()
        bluez.connection.close()
        control.bus.close()
        await simulator.stop()
        await daemon.stop()
    }

    /// Discovers until BlueZ knows `address` (waiting for it to start advertising) and returns its object path.
    func discover(_ address: String) async throws -> ObjectPath {
        let parsed = BluetoothAddress(address)
        let wanted = try #require(parsed)
        if let known = bluez.model.device(address: wanted) { return known.path }
        let adapter = try bluez.adapter()
        try await bluez.startDiscovery(adapter: adapter.path, filter: BlueZ.DiscoveryFilter())
        let seen = await changes.until(timeout: .seconds(10)) { bluez.model.device(address: wanted) != nil }
        try await bluez.stopDiscovery(adapter: adapter.path)
        try #require(seen, "\(address) was not discovered")
        return try #require(bluez.model.device(address: wanted)).path
    }

    /// Discovers if needed and connects (Connect waits for a silent device to advertise).
    func connect(_ address: String) async throws -> ObjectPath {
        let path = try await discover(address)
        try await bluez.connect(path)
        return path
    }

    func characteristic(_ device: ObjectPath, service: String, _ uuid: String) throws -> GattCharacteristicInfo {
        try #require(bluez.model.characteristic(device: device, service: service, uuid: uuid), "no \(uuid) on \(device)")
    }

    func isConnected(_ device: ObjectPath) -> Bool { bluez.model.devices[device]?.connected ?? false }

    /// Whether the link to `device` went within a few seconds.
    func disconnected(_ device: ObjectPath) async -> Bool {
        await changes.until { !isConnected(device) }
    }

    /// Subscribes to `characteristic` with `method` before anything is written, so no answer is missed; a wait for
    /// the next answer is woken by the answers and by the model's changes (a link that went).
    func subscribe(_ characteristic: GattCharacteristicInfo, method: NotifyMethod) async throws -> NotificationInbox {
        let inbox = try await NotificationInbox.subscribe(characteristic, on: bluez, method: method)
        changes.forward(to: inbox.changes)
        return inbox
    }

    func inspectBand() async throws -> [String: String] { try await control.inspect(Self.band) }

    /// Reads the Firmware Revision string (0x2A26).
    func firmwareRevision(_ device: ObjectPath) async throws -> String {
        let characteristic = try characteristic(device, service: GATTUUID.string(for: GATTUUID.Service.deviceInformation),
                                                GATTUUID.string(for: GATTUUID.Characteristic.firmwareRevision))
        return try DeviceInformationString.decode(try await bluez.read(characteristic.path))
    }

    // MARK: One connection's transfer

    enum Outcome: Equatable {
        case finished
        case failed(CommandError)
        /// The link went (the bootloader dropped it): reconnect and run a new client.
        case linkLost
    }

    /// Runs `client` over BlueZ on the bootloader's connection, as the gateway does: control point writes with
    /// response, packets without, every answer fed back from `answers`.
    func transfer(_ client: inout some DFUTransferClient, device: ObjectPath, control: GattCharacteristicInfo,
                  packet: GattCharacteristicInfo, answers: NotificationInbox) async throws -> Outcome {
        var actions = client.start()
        while true {
            var waiting = false
            for action in actions {
                switch action {
                case .writeControl(let bytes), .writePacket(let bytes):
                    let isControl = if case .writeControl = action { true } else { false }
                    do {
                        try await bluez.write(isControl ? control.path : packet.path, bytes, withResponse: isControl)
                    } catch {
                        // The link went under the write; anything else is this test's failure.
                        try #require(await disconnected(device), "writing failed while connected: \(error)")
                        return .linkLost
                    }
                case .waitForNotification: waiting = true
                case .finished: return .finished
                case .failed(let error): return .failed(error.commandError)
                }
            }
            try #require(waiting, "the client stopped without waiting, finishing or failing")
            guard let answer = await answers.next(within: .seconds(10), unless: { !isConnected(device) }) else {
                return .linkLost
            }
            actions = client.answer(answer)
        }
    }
}

/// A characteristic's notifications (or indications), taken one at a time with a deadline.
final class NotificationInbox: Sendable {
    private let values = Mutex<[[UInt8]]>([])
    private let pump = Mutex<Task<Void, Never>?>(nil)
    /// Told of every value that arrives.
    let changes = ChangeNotifier()

    init(_ stream: AsyncStream<[UInt8]>) {
        let task = Task { [self] in
            for await value in stream {
                values.withLock { $0.append(value) }
                changes.changed()
            }
        }
        pump.withLock { $0 = task }
    }

    /// Subscribes with `method` before anything is written, so no answer is missed.
    static func subscribe(_ characteristic: GattCharacteristicInfo, on bluez: BlueZClient,
                          method: NotifyMethod) async throws -> NotificationInbox {
        NotificationInbox(try await bluez.notifications(characteristic.path, method: method))
    }

    /// The next value; nil when none came within `timeout`, or once `stop` holds with nothing queued (re-checked on
    /// every change this inbox is told of).
    func next(within timeout: Duration, unless stop: () -> Bool = { false }) async -> [UInt8]? {
        var taken: [UInt8]?
        _ = await changes.until(timeout: timeout) {
            taken = values.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            return taken != nil || stop()
        }
        return taken
    }

    /// Forgets what arrived and not taken (answers to a client that is gone).
    func clear() { values.withLock { $0 = [] } }

    /// Ends the subscription (StopNotify, or the acquired socket closes).
    func close() { pump.withLock { $0?.cancel() } }
}
