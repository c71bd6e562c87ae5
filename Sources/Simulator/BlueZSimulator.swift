import BlueZ
import DBus
import Logging
import Wearables
import SimulatedWearables

/// A BlueZ 5.66-compatible `org.bluez` service with simulated wearables, for tests and the demo: what a
/// gateway on a Raspberry Pi would see from bluetoothd, on any bus, with no radio.
///
/// ```swift
/// let simulator = try await BlueZSimulator.start(try ScenarioLoader.load(yaml: text), on: .address(daemon.address))
/// …
/// await simulator.stop()
/// ```
/// The BlueZ objects live on one connection that owns `org.bluez`; the control interface (`SimulatorControl`)
/// on a second one that owns `org.wear2mqtt.Simulator`, so the BlueZ object tree has nothing BlueZ lacks.
public final class BlueZSimulator: Sendable {
    /// The connection that owns `org.bluez`.
    public let bus: BusConnection
    /// The connection that owns `org.wear2mqtt.Simulator`.
    public let controlBus: BusConnection
    let daemon: SimulatedBluetoothDaemon
    private let timeline: Task<Void, Never>

    public enum StartError: Error, CustomStringConvertible {
        case scenario(ScenarioError)
        case bus(BusError)
        /// Another process (a real bluetoothd, another simulator) owns the name.
        case nameTaken(String)

        public var description: String {
            switch self {
            case .scenario(let error): "invalid scenario: \(error)"
            case .bus(let error): "\(error)"
            case .nameTaken(let name): "\(name) is already owned on this bus (is bluetoothd or another simulator running?)"
            }
        }
    }

    private init(bus: BusConnection, controlBus: BusConnection, daemon: SimulatedBluetoothDaemon, timeline: Task<Void, Never>) {
        self.bus = bus
        self.controlBus = controlBus
        self.daemon = daemon
        self.timeline = timeline
    }

    /// Connects, exports the adapter and known devices, takes `org.bluez` and `org.wear2mqtt.Simulator`, and
    /// starts the scenario's timeline. Returns when clients can use both.
    public static func start(_ scenario: Scenario, on address: BusAddress,
                             logger: Logger = Logger(label: "wear2mqtt-sim")) async throws(StartError) -> BlueZSimulator {
        let bus: BusConnection
        do {
            bus = try BusConnection(address, logger: logger)
        } catch {
            throw .bus(error)
        }
        let daemon = SimulatedBluetoothDaemon(bus: bus, scenario: scenario, logger: logger)
        let controlBus: BusConnection
        do {
            try await daemon.setUp(devices: scenario.devices)
            guard try await bus.requestName("org.bluez") == .primaryOwner else { throw StartError.nameTaken("org.bluez") }
            controlBus = try BusConnection(address, logger: logger)
            controlBus.objects.export(SimulatorControl.path, interfaces: [(SimulatorControl.definition(daemon), [:])])
            guard try await controlBus.requestName(SimulatorControl.busName) == .primaryOwner else {
                controlBus.close()
                throw StartError.nameTaken(SimulatorControl.busName)
            }
        } catch let error as StartError {
            await daemon.shutDown()
            bus.close()
            throw error
        } catch let error as ScenarioError {
            await daemon.shutDown()
            bus.close()
            throw .scenario(error)
        } catch let error as BusError {
            await daemon.shutDown()
            bus.close()
            throw .bus(error)
        } catch {
            await daemon.shutDown()
            bus.close()
            throw .bus(.connectionFailed("\(error)"))
        }
        let started = ContinuousClock.now
        let timeline = Task {
            for step in scenario.timeline {
                try? await Task.sleep(until: started + step.at, clock: .continuous)
                guard !Task.isCancelled else { return }
                do {
                    try await daemon.apply(step.action)
                } catch {
                    logger.warning("scenario action at \(step.at) failed: \(error)")
                }
            }
        }
        logger.info("simulating BlueZ 5.66 on \(address) with \(scenario.devices.count) device(s)")
        return BlueZSimulator(bus: bus, controlBus: controlBus, daemon: daemon, timeline: timeline)
    }

    /// Injects a fault or device event, as the control interface does.
    public func apply(_ action: SimulatorAction) async throws(BlueZErrorReply) {
        try await daemon.apply(action)
    }

    /// Every value written to `characteristic` that reached the device, oldest first.
    public func received(_ address: BluetoothAddress, characteristic: BluetoothUUID) async throws(BlueZErrorReply) -> [[UInt8]] {
        try await daemon.received(address, characteristic: characteristic)
    }

    /// What the device shows or counted that a central cannot read, as the control interface's `Inspect`.
    public func inspect(_ address: BluetoothAddress) async throws(BlueZErrorReply) -> [String: String] {
        try await daemon.inspect(address)
    }

    /// The adapter's radio faults and counts, as the control interface's `Inspect` with an empty address.
    public func inspectAdapter() async -> [String: String] {
        await daemon.inspectAdapter()
    }

    /// Stops like a bluetoothd that exits: the names are released with the connections.
    public func stop() async {
        timeline.cancel()
        await daemon.shutDown()
        controlBus.close()
        bus.close()
    }

    /// Finishes when the bus connection is gone (the bus daemon went away, or `stop()`).
    public var disconnection: AsyncStream<Void> { bus.disconnection }
}
