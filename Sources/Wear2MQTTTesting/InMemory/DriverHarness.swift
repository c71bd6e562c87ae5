import BlueZ
import Foundation
import Logging
import Synchronization
import SimulatedWearables
import Wearables

/// One driver and one simulated peripheral on an `InMemoryCentral`: connect, run the driver's session, send it
/// commands, read what it emitted. The unit-test counterpart of a gateway's device session, without one.
public final class DriverHarness: Sendable {
    public let central: InMemoryCentral
    public let address: BluetoothAddress
    public let driver: any WearableDriver
    public let recorder = EventRecorder()
    public let link: DeviceLink
    /// Told of every event the link emits and every change of the central (a connection, a write): what `until`
    /// waits on.
    public let changes = ChangeNotifier()
    private let running = SessionTask()

    /// `driver` is made with `configuration` (its address is replaced by `address`).
    public init(_ driver: any WearableDriver.Type, peripheral: any SimulatedPeripheral,
                address: BluetoothAddress = BluetoothAddress("C0:FF:EE:00:00:01")!,
                configuration: DriverConfiguration? = nil, central: InMemoryCentral = InMemoryCentral(),
                notifyMethod: NotifyMethod = .acquire, durable: DurableRecords = .immediate,
                commits: RecordCommits = RecordCommits()) {
        self.central = central
        self.address = address
        var configuration = configuration ?? DriverConfiguration(address: address)
        configuration.address = address
        self.driver = driver.init(configuration: configuration)
        central.add(peripheral, address: address)
        var logger = Logger(label: "driver-test")
        logger.logLevel = .critical
        let recorder = recorder
        link = DeviceLink(central: central, device: central.path(of: address), address: address, notifyMethod: notifyMethod,
                          logger: logger, emit: { recorder.record($0) }, time: central.time,
                          durable: durable, commits: commits)
        recorder.changes.forward(to: changes)
        central.changes.forward(to: changes)
    }

    /// Returns true as soon as `condition` holds, re-checked whenever the link emits an event or the central changes;
    /// false if it still does not after `timeout`, a failure guard in real time.
    public func until(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async rethrows -> Bool {
        try await changes.until(timeout: timeout, condition)
    }

    /// Connects and starts the driver's session; returns at once (the session runs until the link drops).
    public func connect() async throws {
        try await central.connect(central.path(of: address))
        let driver = driver
        let link = link
        running.start { try await driver.session(link) }
    }

    public func execute(_ command: DeviceCommand) async throws(CommandError) -> DeviceValue {
        try await driver.execute(command, link: link)
    }

    /// Ends the link and waits for the session to return; its error, if it threw one.
    @discardableResult
    public func disconnect() async -> (any Error)? {
        try? await central.disconnect(central.path(of: address))
        return await running.finish()
    }

    /// Whether the session has returned (it should only once the link is gone).
    public var sessionEnded: Bool { running.isFinished }
}

/// The driver's session task and how it ended.
private final class SessionTask: Sendable {
    private let task = Mutex<Task<(any Error)?, Never>?>(nil)
    private let finished = Mutex(false)

    func start(_ body: @escaping @Sendable () async throws -> Void) {
        let started = Task { [self] () -> (any Error)? in
            defer { finished.withLock { $0 = true } }
            do { try await body() } catch { return error }
            return nil
        }
        task.withLock { $0 = started }
    }

    var isFinished: Bool { finished.withLock { $0 } }

    func finish() async -> (any Error)? {
        await task.withLock { $0 }?.value
    }
}
