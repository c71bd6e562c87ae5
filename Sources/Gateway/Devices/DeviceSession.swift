import BlueZ
import DBus
import Foundation
import Logging
import MQTT
import Wearables

/// What a session reports to the gateway, which turns it into MQTT messages.
public enum SessionOutput: Sendable {
    case event(WearableEvent)
    case connection(ConnectionState)
}

/// The link to one device as the contract's state shows it (`connection`).
public enum ConnectionState: String, Sendable {
    case disconnected, connecting, connected, disconnecting
}

/// One managed device: keeps it connected (reconnecting with backoff), runs its driver's session while it
/// is, and executes commands one at a time from a bounded queue.
///
/// Each device has its own session and task, so a slow or absent device delays nobody else's samples or
/// commands.
public actor DeviceSession {
    public let device: ManagedDevice
    public let address: BluetoothAddress
    private let driver: any WearableDriver
    let bluez: any BluetoothCentral
    let adapter: @Sendable () -> AdapterInfo?
    let discovery: DiscoveryCoordinator
    let output: @Sendable (SessionOutput) -> Void
    let logger: Logger
    private let commandTimeout: Duration
    private let queueCapacity: Int
    /// What the gateway keeps for this device across restarts (the driver's entries, and a scheduled update).
    let storage: DriverStorage
    /// Where firmware packages come from, to check a scheduled update's package again after a restart.
    let firmwarePackages: Configuration.DFUSection

    private var connectionTask: Task<Void, Never>?
    private var queued = 0
    private var lastCommand: Task<Void, Never>?
    private(set) var link: DeviceLink?
    var wakeRequested = false
    /// Set by the `disconnect` command: stay away until `connect` (or a restart of the gateway).
    private var heldDisconnected = false
    /// The firmware update running or waiting for the device (`DeviceSession+FirmwareUpdate.swift`).
    var updateJob: FirmwareUpdateJob?
    /// Set while an update has the device in its bootloader: the application is not there to reconnect to.
    var heldForUpdate = false
    /// Set when an update that put the device into its bootloader ended without installing (cancelled, refused,
    /// given up): the application may not come back by itself, so the next `dfu` goes to the bootloader directly.
    /// Cleared when the device connects again.
    var leftInBootloader = false

    public private(set) var state = ConnectionState.disconnected

    init(device: ManagedDevice, address: BluetoothAddress, driver: any WearableDriver, bluez: any BluetoothCentral,
         adapter: @escaping @Sendable () -> AdapterInfo?, discovery: DiscoveryCoordinator,
         output: @escaping @Sendable (SessionOutput) -> Void, logger: Logger,
         storage: DriverStorage = .inMemory(), firmwarePackages: Configuration.DFUSection = .init(),
         commandTimeout: Duration = .seconds(30), queueCapacity: Int = 8) {
        self.storage = storage
        self.firmwarePackages = firmwarePackages
        self.device = device
        self.address = address
        self.driver = driver
        self.bluez = bluez
        self.adapter = adapter
        self.discovery = discovery
        self.output = output
        self.logger = logger
        self.commandTimeout = commandTimeout
        self.queueCapacity = queueCapacity
    }

    // MARK: Staying connected

    public func start() {
        guard connectionTask == nil else { return }
        restoreScheduledUpdate()
        connectionTask = Task { await keepConnected() }
    }

    /// Stops reconnecting and disconnects.
    public func stop() async {
        connectionTask?.cancel()
        connectionTask = nil
        if case .running(_, let task) = updateJob { task.cancel() }
        updateJob = nil
        if let path = devicePath(), state == .connected {
            setState(.disconnecting)
            try? await bluez.disconnect(path)
        }
        setState(.disconnected)
    }

    /// Tries to connect now instead of waiting out the backoff (the `connect` command).
    public func connectNow() {
        heldDisconnected = false
        wakeRequested = true
    }

    func devicePath() -> ObjectPath? {
        guard let adapter = adapter() else { return nil }
        return bluez.model.device(address: address, adapter: adapter.path)?.path
    }

    func setState(_ new: ConnectionState) {
        guard new != state else { return }
        state = new
        output(.connection(new))
    }

    private func keepConnected() async {
        var backoff = ReconnectBackoff(minimumDelay: .seconds(1), maximumDelay: .seconds(60))
        while !Task.isCancelled {
            let connected = await connectOnce()
            if connected {
                backoff.reset()
                await runSession()
            }
            guard !Task.isCancelled else { break }
            let delay = connected ? Duration.milliseconds(500) : backoff.nextDelay()
            // Sleep out the backoff, unless a `connect` command wakes us early.
            let deadline = ContinuousClock.now + delay
            while (ContinuousClock.now < deadline || heldDisconnected || heldForUpdate) && !wakeRequested && !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
            }
            wakeRequested = false
        }
    }

    /// One attempt: find the device (discovering if BlueZ does not know it yet), connect, resolve services.
    private func connectOnce() async -> Bool {
        guard bluez.isServiceAvailable, let adapter = adapter(), adapter.powered else { return false }
        var path = devicePath()
        if path == nil {
            // BlueZ can only connect to a device it has seen advertise since it started.
            let lease = await discovery.acquire(adapter: adapter.path)
            let address = address
            _ = await waitForModel(timeout: .seconds(20)) { $0.device(address: address, adapter: adapter.path) != nil }
            await discovery.release(lease)
            path = devicePath()
        }
        guard let path else { return false }
        setState(.connecting)
        do {
            try await bluez.connect(path, timeout: .seconds(20))
            setState(.connected)
            return true
        } catch {
            logger.info("connection attempt failed", metadata: ["device": "\(device.id)", "error": "\(error)"])
            setState(.disconnected)
            return false
        }
    }

    private func waitForModel(timeout: Duration, _ condition: @escaping @Sendable (BlueZModel) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline && !Task.isCancelled {
            if condition(bluez.model) { return true }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return condition(bluez.model)
    }

    /// Runs the driver until the link drops.
    private func runSession() async {
        guard let path = devicePath() else { return }
        let output = output
        let deviceID = device.id
        let sessionLink = DeviceLink(
            central: bluez, device: path, address: address,
            notifyMethod: device.options.notify == "start_notify" ? .startNotify : .acquire,
            logger: logger, emit: { output(.event($0)) },
            clock: { Int64(Date().timeIntervalSince1970 * 1000) })
        link = sessionLink
        leftInBootloader = false
        if case .scheduled(let order) = updateJob { startUpdate(order) }
        let driver = driver
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await driver.session(sessionLink)
                } catch {
                    Logger(label: "wear2mqtt.device").warning("driver session ended with an error",
                                                              metadata: ["device": "\(deviceID)", "error": "\(error)"])
                }
                // A session that ends on its own leaves the link to the wait below.
                await sessionLink.waitForDisconnection()
            }
            group.addTask { await sessionLink.waitForDisconnection() }
            await group.next()
            group.cancelAll()
        }
        link = nil
        if !Task.isCancelled { logger.info("device disconnected", metadata: ["device": "\(device.id)"]) }
        setState(.disconnected)
    }

    // MARK: Commands

    /// Runs `command` after the ones queued before it. `BUSY` when the queue is full, `DEVICE_DISCONNECTED`
    /// when the device is away (or goes away during the command), `TIMEOUT` after the command timeout.
    public func execute(_ command: DeviceCommand) async throws(CommandError) -> DeviceValue {
        guard queued < queueCapacity else {
            throw CommandError(.busy, "\(queued) commands are waiting for \(device.id); try again later")
        }
        queued += 1
        defer { queued -= 1 }
        let previous = lastCommand
        let (turn, myTurnEnds) = AsyncStream.makeStream(of: Void.self)
        lastCommand = Task {
            for await _ in turn {}
        }
        defer { myTurnEnds.finish() }
        await previous?.value
        return try await run(command)
    }

    private func run(_ command: DeviceCommand) async throws(CommandError) -> DeviceValue {
        switch command {
        case .named("connect", _):
            connectNow()
            return .object(["connection": .text(state.rawValue)])
        case .named("disconnect", _):
            heldDisconnected = true
            if let path = devicePath() {
                let wasConnected = state == .connected
                if wasConnected { setState(.disconnecting) }
                do { try await bluez.disconnect(path) } catch {
                    heldDisconnected = false
                    if wasConnected { setState(.connected) }
                    throw CommandError(bluez: error)
                }
            }
            return .object([:])
        default:
            break
        }
        guard let link, state == .connected else {
            throw CommandError(.deviceDisconnected, "\(device.id) is not connected; the command was not sent")
        }
        let driver = driver
        let timeout = command.runsLong ? max(commandTimeout, .seconds(6 * 3600)) : commandTimeout
        let result = await withTaskGroup(of: Result<DeviceValue, CommandError>?.self) { group in
            group.addTask {
                do throws(CommandError) {
                    return .success(try await driver.execute(command, link: link))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return Task.isCancelled ? nil : .failure(CommandError(.timeout, "\(command.name) did not finish within \(timeout)"))
            }
            group.addTask {
                await link.waitForDisconnection()
                return Task.isCancelled ? nil : .failure(CommandError(.deviceDisconnected, "the device went away during \(command.name)"))
            }
            var outcome: Result<DeviceValue, CommandError>?
            while outcome == nil, let next = await group.next() { outcome = next }
            group.cancelAll()
            return outcome ?? .failure(CommandError(.internalError, "the command ended without a result"))
        }
        return try result.get()
    }
}
