import BlueZ
import DBus
import EventLoop
import FoundationEssentials
import Logging
import MQTT
import Wearables

/// What a session reports to the gateway, which turns it into MQTT messages.
public enum SessionOutput: Sendable {
    case event(WearableEvent)
    case connection(ConnectionState)
    /// How the link is held on demand (the state document's `link`); nil while it is simply held.
    case link(DeviceValue?)
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
    let driver: any WearableDriver
    let bluez: any BluetoothCentral
    let adapter: @Sendable () -> AdapterInfo?
    let discovery: DiscoveryCoordinator
    let output: @Sendable (SessionOutput) -> Void
    let logger: Logger
    private let commandTimeout: Duration
    /// The clock of its backoff, timeouts and the timestamps its link puts on records.
    let time: TimeSource
    private let queueCapacity: Int
    /// What the gateway keeps for this device across restarts (the driver's entries, and a scheduled update).
    let storage: DriverStorage
    /// Where firmware packages come from, to check a scheduled update's package again after a restart.
    let firmwarePackages: Configuration.DFUSection

    private var connectionTask: Task<Void, Never>?
    /// Commands waiting or running, for the bound.
    private var queued = 0
    /// Commands take their turns here, one at a time in arrival order; each runs on its caller's task (and is
    /// cancelled with it).
    private let commands = OrderedWorkQueue()
    private(set) var link: DeviceLink?
    /// Whether the gateway may connect, what the contract shows of the link, where an update stands.
    var lifecycle = DeviceLifecycle()
    /// Ends the wait between connection attempts early (`connect`, the end of an update).
    let wakes: WakeSignal
    /// Signalled when a session's link is up, for an update waiting for the application to come back.
    let linkUp: WakeSignal
    /// Lets the driver wait until its records are stored before the device forgets them.
    let durableRecords: DurableRecords
    /// The driver's record commits (records out, cursor moved), which `stop` lets finish before the cursors are read.
    private let commits = RecordCommits()
    /// The data of the update the lifecycle says is scheduled or running (`DeviceSession+FirmwareUpdate.swift`).
    var updateJob: FirmwareUpdateJob?
    /// With `link` on demand (or `auto` for a device that only syncs): when the link is wanted and when it is let go
    /// (`DeviceSession+OnDemand.swift`); nil when the link is always held.
    var visits: OnDemandVisits?
    /// Whether the radio at an adapter path has few connection slots (an ESPHome proxy), for `link: auto`.
    let radioIsShared: @Sendable (ObjectPath) -> Bool
    /// Attempts to connect so far, and a signal at the end of each: a command waiting for a visit learns its outcome.
    var attempts: UInt64 = 0
    let attemptEnded: WakeSignal
    /// Signalled when a command on a visit ends, so the visit looks again at when to let the link go.
    let visitNews: WakeSignal
    /// When the driver last reported something other than a sample, for the visit's quiet time.
    let lastReport: ReportClock

    public var state: ConnectionState { lifecycle.connection }

    init(device: ManagedDevice, address: BluetoothAddress, driver: any WearableDriver, bluez: any BluetoothCentral,
         adapter: @escaping @Sendable () -> AdapterInfo?, discovery: DiscoveryCoordinator,
         output: @escaping @Sendable (SessionOutput) -> Void, logger: Logger,
         storage: DriverStorage = .inMemory(), firmwarePackages: Configuration.DFUSection = .init(),
         commandTimeout: Duration = .seconds(30), queueCapacity: Int = 8, durableRecords: DurableRecords = .immediate,
         radioIsShared: @escaping @Sendable (ObjectPath) -> Bool = { _ in false }, time: TimeSource = .system) {
        self.time = time
        wakes = WakeSignal(time: time)
        linkUp = WakeSignal(time: time)
        attemptEnded = WakeSignal(time: time)
        visitNews = WakeSignal(time: time)
        lastReport = ReportClock(time.now)
        self.radioIsShared = radioIsShared
        if device.options.link == .onDemand || (device.options.link == .auto && type(of: driver).driverDescription.onlySyncs) {
            visits = OnDemandVisits(interval: .seconds(device.options.syncEverySeconds), now: time.now)
        }
        self.durableRecords = durableRecords
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
        // The scheduled update's package is read again off the actor (it is a file access), before connecting.
        connectionTask = Task {
            await restoreScheduledUpdate()
            restoreBootloader()
            await keepConnected()
        }
    }

    /// Stops reconnecting and disconnects, after letting a record commit in flight finish (at most `commitWait`):
    /// what is stored for the device afterwards matches what was published.
    public func stop(commitWait: Duration = .seconds(2)) async {
        let settled = WakeSignal(time: time)
        if !commits.close(whenSettled: { settled.signal() }),
           await !settled.wait(until: time.now + commitWait), !Task.isCancelled {
            logger.warning("a record commit did not finish in time; its records may be published again by the next sync",
                           metadata: ["device": "\(device.id)"])
        }
        connectionTask?.cancel()
        connectionTask = nil
        let path = devicePath()
        for action in apply(lifecycle.stopRequested()) {
            switch action {
            case .cancelUpdate: if case .running(_, let task) = updateJob { task.cancel() }
            case .disconnect: if let path { try? await bluez.disconnect(path) }
            default: break
            }
        }
        updateJob = nil
    }

    /// Tries to connect now instead of waiting out the backoff (the `connect` command).
    public func connectNow() {
        visitRequested()
        apply(lifecycle.connectRequested())
    }

    func devicePath() -> ObjectPath? {
        guard let adapter = adapter() else { return nil }
        return bluez.model.device(address: address, adapter: adapter.path)?.path
    }

    /// Carries out the actions every caller handles alike (publishing the link's state, waking the wait) and
    /// answers all of them for the caller's own.
    @discardableResult
    func apply(_ actions: [DeviceLifecycle.Action]) -> [DeviceLifecycle.Action] {
        for action in actions {
            switch action {
            case .publish(let state): output(.connection(state))
            case .wake: wakes.signal()
            default: break
            }
        }
        return actions
    }

    private func keepConnected() async {
        var backoff = ReconnectBackoff(minimumDelay: .seconds(1), maximumDelay: .seconds(60))
        // A document kept from when the link was on demand says so no longer.
        if visits == nil { output(.link(nil)) }
        while !Task.isCancelled {
            // Held by the user or by an update: nothing to do until released.
            while !lifecycle.mayConnect && !Task.isCancelled { await wakes.wait(until: nil) }
            guard !Task.isCancelled else { break }
            // On demand: not before a visit is wanted.
            await waitForVisit()
            guard !Task.isCancelled else { break }
            var outcome = await connectOnce()
            let syncs = attemptOver(connected: outcome.contains(.runSession))
            if outcome.contains(.runSession) {
                backoff.reset()
                outcome = await runSession(startingUpdate: outcome.contains(.startUpdate), visitSyncs: syncs)
            }
            guard !Task.isCancelled else { break }
            // Sleep out the backoff (or a short pause after a session), unless a `connect` or an update wakes us.
            if case .retry(let afterBackoff)? = outcome.last {
                await wakes.wait(until: time.now + (afterBackoff ? backoff.nextDelay() : .milliseconds(500)))
            }
        }
    }

    /// One attempt: find the device (discovering if BlueZ does not know it yet), connect, resolve services.
    private func connectOnce() async -> [DeviceLifecycle.Action] {
        guard bluez.isServiceAvailable, let adapter = adapter(), adapter.powered else { return apply(lifecycle.connectFailed()) }
        var path = devicePath()
        if path == nil {
            // BlueZ can only connect to a device it has seen advertise since it started.
            let lease = await discovery.acquire(adapter: adapter.path)
            let address = address
            let chosen = adapter.path
            let choose = self.adapter
            // Heard by the chosen radio, or by another that the choice now prefers (an ESPHome proxy that had not yet
            // heard the device when the session started: waiting out the 20 s for the local adapter delayed every
            // proxy-only device's first connection by that much).
            _ = await bluez.wait(timeout: .seconds(20)) { model in
                model.device(address: address, adapter: chosen) != nil
                    || (model.devices.values.contains { $0.address == address } && choose()?.path != chosen)
            }
            await discovery.release(lease)
            path = devicePath()
        }
        guard let path else { return apply(lifecycle.connectFailed()) }
        apply(lifecycle.connecting())
        do {
            try await bluez.connect(path, timeout: .seconds(20))
            rememberBootloader(false)
            // Which radio holds the link: the local adapter (hci0) or an ESPHome proxy's name (docs/radios.md) — the
            // one the device object lies under, which the choice made after discovery may have changed.
            let model = bluez.model
            let radio = model.devices[path].flatMap { model.adapters[$0.adapter] }?.id ?? adapter.id
            output(.event(.state(["radio": .text(radio)])))
            return apply(lifecycle.connected())
        } catch {
            logger.info("connection attempt failed", metadata: ["device": "\(device.id)", "error": "\(error)"])
            return apply(lifecycle.connectFailed())
        }
    }

    /// Runs the driver until the link drops (starting the update the lifecycle took up on connecting, and on demand
    /// the visit that lets the link go); answers what the lifecycle says next.
    private func runSession(startingUpdate: Bool, visitSyncs: Bool) async -> [DeviceLifecycle.Action] {
        guard let path = devicePath() else { return apply(lifecycle.disconnected()) }
        let output = output
        let deviceID = device.id
        let emit: @Sendable (WearableEvent) -> Void
        if visits == nil {
            emit = { output(.event($0)) }
        } else {
            // What the driver reports keeps an on-demand link a while longer (a sync's pages); samples do not.
            let lastReport = lastReport, time = time
            emit = { event in
                if case .sample = event {} else { lastReport.note(time.now) }
                output(.event(event))
            }
        }
        let sessionLink = DeviceLink(
            central: bluez, device: path, address: address,
            notifyMethod: device.options.notify == "start_notify" ? .startNotify : .acquire,
            logger: logger, emit: emit,
            time: time, durable: durableRecords, commits: commits)
        link = sessionLink
        linkUp.signal()
        if startingUpdate, case .scheduled(let order) = updateJob { startUpdate(order) }
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
            if visits != nil { group.addTask { await self.visit(sessionLink, path: path, syncs: visitSyncs) } }
            await group.next()
            group.cancelAll()
        }
        link = nil
        if visits?.linkLost() == true { publishLink() }
        if !Task.isCancelled { logger.info("device disconnected", metadata: ["device": "\(device.id)"]) }
        return apply(lifecycle.disconnected())
    }

    // MARK: Commands

    /// Runs the driver's `command` after the ones queued before it. `BUSY` when the queue is full,
    /// `DEVICE_DISCONNECTED` when the device is away (or goes away during the command), `TIMEOUT` after the command
    /// timeout.
    public func execute(_ command: DeviceCommand) async throws(CommandError) -> DeviceValue {
        try await inTurn { () async throws(CommandError) -> DeviceValue in try await run(command) }
    }

    /// `connect`: connect now instead of at the next attempt, in turn with the commands.
    public func connectRequested() async throws(CommandError) -> DeviceValue {
        try await inTurn { () async throws(CommandError) -> DeviceValue in
            connectNow()
            return .object(["connection": .text(state.rawValue)])
        }
    }

    /// `disconnect`: disconnect and stay away until `connect`, in turn with the commands.
    public func disconnectRequested() async throws(CommandError) -> DeviceValue {
        try await inTurn { () async throws(CommandError) -> DeviceValue in
            let wasConnected = state == .connected
            if apply(lifecycle.disconnectRequested()).contains(.disconnect), let path = devicePath() {
                do throws(BlueZError) { try await bluez.disconnect(path) } catch {
                    apply(lifecycle.disconnectFailed(wasConnected: wasConnected))
                    throw CommandError(bluez: error)
                }
            }
            return .object([:])
        }
    }

    /// One request at a time, in arrival order, at most `queueCapacity` waiting.
    private func inTurn(_ body: () async throws(CommandError) -> DeviceValue) async throws(CommandError) -> DeviceValue {
        guard queued < queueCapacity else {
            throw CommandError(.busy, "\(queued) commands are waiting for \(device.id); try again later")
        }
        queued += 1
        defer { queued -= 1 }
        return try await commands.inTurn(body)
    }

    private func run(_ command: DeviceCommand) async throws(CommandError) -> DeviceValue {
        if visits != nil {
            visits?.commandQueued()
            wakes.signal()
        }
        defer { commandEnded(command) }
        let (link, broughtUp) = try await linkForCommand()
        // A command that brought an on-demand link up waits for the driver's session to start (BUSY while, say, a
        // band proves its key) rather than answer BUSY to a client that could not know the link was down.
        guard broughtUp else { return try await run(command, on: link) }
        return try await whileSessionStarts { () async throws(CommandError) -> DeviceValue in try await run(command, on: link) }
    }

    private func run(_ command: DeviceCommand, on link: DeviceLink) async throws(CommandError) -> DeviceValue {
        let driver = driver
        let runsLong = type(of: driver).driverDescription.command(command.name)?.duration.isLong(command.arguments) ?? false
        let timeout = runsLong ? max(commandTimeout, .seconds(6 * 3600)) : commandTimeout
        let time = time
        let result = await withTaskGroup(of: Result<DeviceValue, CommandError>?.self) { group in
            group.addTask {
                do throws(CommandError) {
                    return .success(try await driver.execute(command, link: link))
                } catch where error.code == .notSupported && !link.isConnected {
                    // A part that seems missing because the link went during the command (BlueZ drops the GATT
                    // table with it), for every driver.
                    return .failure(CommandError(.deviceDisconnected, "the device went away during \(command.name)"))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await time.sleep(for: timeout)
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
