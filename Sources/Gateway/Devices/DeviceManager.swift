import BlueZ
import DBus
import EventLoop
import FoundationEssentials
import Logging
import Wearables

/// What the device side tells the gateway's MQTT side.
public enum ManagerOutput: Sendable {
    case device(id: String, SessionOutput)
    /// The device list changed (added, removed, renamed, options): republish `bridge/devices`.
    case deviceListChanged
    /// A device's topics must be cleared (removed or renamed away from this id).
    case deviceRetired(id: String)
    /// A `bridge/event`.
    case bridgeEvent(type: String, data: [String: DeviceValue])
}

/// The managed devices: their sessions, the persistent list, scanning, adding, removing, renaming, options
/// and pairing. Commands for a device go to its session.
public actor DeviceManager {
    let bluez: any BluetoothCentral
    let registry: DriverRegistry
    let firmwarePackages: Configuration.DFUSection
    let store: DeviceStore
    let filter: DeviceFilter
    let adapterSelector: AdapterSelector?
    /// With ESPHome proxies: which radio serves each device (nil: the configured adapter serves all).
    let radios: RadioRouter?
    let output: @Sendable (ManagerOutput) -> Void
    let logger: Logger
    public let discovery: DiscoveryCoordinator
    var devices: [String: ManagedDevice] = [:]
    var sessions: [String: DeviceSession] = [:]
    /// Configured devices without `driver:` waiting to be seen advertising, by address: managed already, so
    /// `device/add` refuses their address as it refuses a connected one.
    var awaitingDriver: [String: ManagedDevice] = [:]
    /// The waits of `awaitingDriver`, by address; `stopAll` ends them.
    var detections: [String: Task<Void, Never>] = [:]
    /// The running scan (one at a time): its discovery lease, the task that reads the model's events, what it found,
    /// when it ends, and the timer its request waits on (cancelled by `scan/stop`, which ends the wait early).
    var scan: (lease: DiscoveryCoordinator.Lease?, task: Task<Void, Never>, found: [String: [String: DeviceValue]],
                       ends: ContinuousClock.Instant, timer: Task<Void, Never>)?
    /// What the last scan found when `scan/stop` ended it, for the request that waits on it.
    var finishedScan: [String: [String: DeviceValue]] = [:]
    var pairings: [String: PairingFlow] = [:]
    var signalStrength = SignalStrengthReports()
    var signalWatch: Task<Void, Never>?
    /// Handed to every session's link, so drivers can wait until their records are stored (`emitDurably`).
    let durableRecords: DurableRecords
    /// The clock of its timers (scans, the stop deadline) and its sessions'.
    let time: TimeSource
    /// In a site of gateways (docs/roaming.md) every gateway manages the site's devices but only the owner connects
    /// one: the ids this gateway holds. nil when the gateway is alone, and then it holds every managed device.
    var held: Set<String>?
    /// Every RSSI reading of a managed device, uncalmed: a site's sighting reports are made of them.
    var onHeard: (@Sendable (_ id: String, _ rssi: Int) -> Void)?
    var siteListening: Task<Void, Never>?
    var siteLease: DiscoveryCoordinator.Lease?

    public init(bluez: any BluetoothCentral, registry: DriverRegistry, store: DeviceStore, filter: DeviceFilter,
                adapter: AdapterSelector?, radios: RadioRouter? = nil, firmwarePackages: Configuration.DFUSection = .init(),
                output: @escaping @Sendable (ManagerOutput) -> Void, durableRecords: DurableRecords = .immediate,
                time: TimeSource = .system, logger: Logger) {
        self.time = time
        self.durableRecords = durableRecords
        self.firmwarePackages = firmwarePackages
        self.bluez = bluez
        self.registry = registry
        self.store = store
        self.filter = filter
        self.adapterSelector = adapter
        self.radios = radios
        self.output = output
        self.logger = logger
        discovery = DiscoveryCoordinator(bluez: bluez, logger: logger)
    }

    public var adapter: AdapterInfo? { try? bluez.adapter(adapterSelector) }

    // MARK: The device list

    /// Starts sessions for the configured devices and those added earlier over MQTT.
    /// `configuredOptions`: the options config.yaml sets, by address; they win over the stored ones they name.
    /// `beforeSessions` hears the ids of the devices managed from now on before any of their sessions reports.
    public func start(configured: [ManagedDevice], configuredOptions: [String: DeviceOptionsChange] = [:],
                      beforeSessions: (Set<String>) -> Void = { _ in }) {
        let merged = ManagedDeviceList.merge(configured: configured, stored: (try? store.load()) ?? [],
                                             configuredOptions: configuredOptions)
        let all = merged.managed, undetected = merged.undetected
        for device in undetected { awaitingDriver[device.address] = device }
        beforeSessions(Set(all.values.map(\.id)))
        for device in all.values { startSession(device) }
        for device in undetected { detectDriver(of: device) }
        output(.deviceListChanged)
        watchSignalStrength()
    }

    /// Puts the RSSI BlueZ reports for a managed device into its state (`rssi`), calmed by `SignalStrengthReports`.
    func watchSignalStrength() {
        guard signalWatch == nil else { return }
        let events = bluez.events()
        // Unstructured: watches RSSI for the manager's life (weak self), started from synchronous code.
        signalWatch = Task { [weak self] in
            for await event in events {
                guard case .deviceChanged(let info, let changed) = event, changed.contains("RSSI"), let rssi = info.rssi,
                      let address = info.address else { continue }
                await self?.heard(address, rssi: rssi)
            }
        }
    }

    func heard(_ address: BluetoothAddress, rssi: Int) {
        guard let device = devices.values.first(where: { $0.address == address.rawValue }) else { return }
        onHeard?(device.id, rssi)
        guard signalStrength.report(rssi, device: device.id, at: time.now) else { return }
        output(.device(id: device.id, .event(.state(["rssi": .integer(Int64(rssi))]))))
    }

    /// Waits until BlueZ has seen `device` advertise (discovering while waiting, retrying every minute while it
    /// is away), then manages it with the driver its advertisement matches best, or `standard`.
    func detectDriver(of device: ManagedDevice) {
        guard let address = BluetoothAddress(device.address) else { return }
        // Unstructured: waits for the device's advertisement; kept in `detections`, cancelled when the device goes.
        detections[device.address] = Task {
            while !Task.isCancelled {
                if let seen = bluez.model.device(address: address) {
                    detected(device, driver: (registry.bestMatch(for: seen) ?? registry.fallback).name)
                    return
                }
                let bluez = bluez
                guard let adapter else {
                    // BlueZ not loaded yet, or no adapter: wait for one.
                    let selector = adapterSelector
                    _ = await bluez.wait(timeout: .seconds(5)) { _ in (try? bluez.adapter(selector)) != nil }
                    continue
                }
                let lease = await discovery.acquire(adapter: adapter.path)
                // Also ends when another adapter is the one to use now (bluetoothd came onto the bus after a proxy
                // was chosen for want of it): discovery starts again there.
                let selector = adapterSelector
                _ = await bluez.wait(timeout: .seconds(30)) { model in
                    model.device(address: address) != nil || (try? bluez.adapter(selector))?.path != adapter.path
                }
                await discovery.release(lease)
                if bluez.model.device(address: address) == nil, (try? bluez.adapter(adapterSelector))?.path == adapter.path {
                    // Away: wait for it to show up by itself (another scan) before discovering again.
                    _ = await bluez.wait(timeout: .seconds(60)) { $0.device(address: address) != nil }
                }
            }
        }
    }

    func detected(_ device: ManagedDevice, driver: String) {
        var device = device
        device.driver = driver
        awaitingDriver[device.address] = nil
        detections[device.address] = nil
        if device.name == nil { device.id = DeviceIdentifier.defaultID(driver: driver, address: device.address) }
        guard devices[device.id] == nil else {
            logger.error("a configured device's id is taken", metadata: ["id": "\(device.id)", "address": "\(device.address)"])
            return
        }
        logger.info("driver chosen from the advertisement", metadata: ["id": "\(device.id)", "driver": "\(driver)"])
        startSession(device)
        persist()
        output(.deviceListChanged)
    }

    /// Stops every session and disconnects its device, waiting at most `timeout` for the disconnections.
    public func stopAll(timeout: Duration) async {
        signalWatch?.cancel()
        siteListening?.cancel()
        if let siteLease { await discovery.release(siteLease) }
        siteLease = nil
        for detection in detections.values { detection.cancel() }
        detections = [:]
        let stopping = Array(sessions.values)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskGroup(of: Void.self) { inner in
                    for session in stopping { inner.addTask { await session.stop() } }
                }
            }
            group.addTask { [time] in try? await time.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    public var managedDevices: [ManagedDevice] { devices.values.sorted { $0.id < $1.id } }

    public func session(id: String) -> DeviceSession? { sessions[managedID(id)] }

    public func connectionState(id: String) async -> ConnectionState { await sessions[managedID(id)]?.state ?? .disconnected }

    /// The one place a device becomes managed, so the rule "one managed entry per address" holds here: two sessions
    /// on one address would fight over its notifications ("Notify acquired") and leave both in InProgress.
    func startSession(_ device: ManagedDevice) {
        if let other = devices.values.first(where: { $0.address == device.address && $0.id != device.id }) {
            logger.error("not managing a second entry for an address", metadata: [
                "id": "\(device.id)", "address": "\(device.address)", "managed_as": "\(other.id)"])
            return
        }
        guard let address = BluetoothAddress(device.address),
              let driverType = registry.driver(named: device.driver) else {
            logger.error("cannot manage device", metadata: ["id": "\(device.id)", "driver": "\(device.driver)"])
            return
        }
        guard filter.permits(address: address, driver: device.driver) else {
            logger.warning("device refused by the allow/deny lists", metadata: ["id": "\(device.id)", "address": "\(address)"])
            return
        }
        devices[device.id] = device
        guard held?.contains(device.id) ?? true else { return }
        let id = device.id
        let output = output
        let storage = DriverFileStorage.storage(stateDirectory: store.stateDirectory, address: address)
        let driver = driverType.init(configuration: DriverConfiguration(
            address: address, notifyMethod: device.options.notify == "start_notify" ? .startNotify : .acquire,
            configure: device.configure ?? [:], storage: storage))
        let bluez = bluez
        let selector = adapterSelector
        let session = DeviceSession(
            device: device, address: address, driver: driver, bluez: bluez,
            adapter: { [radios, address] in
                let fallback = try? bluez.adapter(selector)
                return radios?.adapter(for: address, fallback: fallback) ?? fallback
            }, discovery: discovery,
            output: { output(.device(id: id, $0)) },
            logger: logger, storage: storage, firmwarePackages: firmwarePackages, durableRecords: durableRecords,
            radioIsShared: { [radios] in radios?.isProxy($0) ?? false }, time: time)
        sessions[id] = session
        // Unstructured: `start` is the session actor's; adding a device must not wait for it.
        Task { await session.start() }
    }

    /// Starts a session on the device's current entry after a wait for the old one to stop, unless a request that
    /// ran during the wait already started one, or removed or renamed the device: one session per device, always.
    func startSessionIfIdle(_ id: String) {
        guard sessions[id] == nil, let device = devices[id] else { return }
        startSession(device)
    }

    func persist() {
        do {
            try store.save(Array(devices.values))
        } catch {
            logger.error("cannot save the device list", metadata: ["path": "\(store.path)", "error": "\(error)"])
        }
    }

    /// Saves `list` as the device list before a request changes it, so that what was answered ok survives a
    /// restart: a full or unwritable state folder refuses the change instead (logged, and `INTERNAL` naming the
    /// cause, such as "No space left on device").
    func saveBeforeChanging(_ list: [String: ManagedDevice]) throws(CommandError) {
        do {
            try store.save(Array(list.values))
        } catch {
            let cause = "\(error)"
            logger.error("cannot save the device list; the change is refused", metadata: ["path": "\(store.path)", "error": "\(cause)"])
            throw CommandError(.internalError, "the device list cannot be saved in the state folder (\(cause)); nothing was changed")
        }
    }
}
