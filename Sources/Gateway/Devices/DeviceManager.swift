import BlueZ
import DBus
import Foundation
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

/// Which devices the gateway may manage, by address and driver. Deny wins over allow; an empty allow list
/// allows everything.
public struct DeviceFilter: Sendable, Equatable {
    public var allowAddresses: Set<BluetoothAddress> = []
    public var denyAddresses: Set<BluetoothAddress> = []
    public var allowDrivers: Set<String> = []
    public var denyDrivers: Set<String> = []

    public init(allowAddresses: Set<BluetoothAddress> = [], denyAddresses: Set<BluetoothAddress> = [],
                allowDrivers: Set<String> = [], denyDrivers: Set<String> = []) {
        self.allowAddresses = allowAddresses
        self.denyAddresses = denyAddresses
        self.allowDrivers = allowDrivers
        self.denyDrivers = denyDrivers
    }

    public func permits(address: BluetoothAddress, driver: String) -> Bool {
        if denyAddresses.contains(address) || denyDrivers.contains(driver) { return false }
        if !allowAddresses.isEmpty && !allowAddresses.contains(address) { return false }
        if !allowDrivers.isEmpty && !allowDrivers.contains(driver) { return false }
        return true
    }
}

/// The managed devices: their sessions, the persistent list, scanning, adding, removing, renaming, options
/// and pairing. Commands for a device go to its session.
public actor DeviceManager {
    private let bluez: any BluetoothCentral
    private let registry: DriverRegistry
    private let firmwarePackages: Configuration.DFUSection
    private let store: DeviceStore
    private let filter: DeviceFilter
    private let adapterSelector: AdapterSelector?
    private let output: @Sendable (ManagerOutput) -> Void
    private let logger: Logger
    public let discovery: DiscoveryCoordinator
    private var devices: [String: ManagedDevice] = [:]
    private var sessions: [String: DeviceSession] = [:]
    /// Configured devices without `driver:` waiting to be seen advertising, by address: managed already, so
    /// `device/add` refuses their address as it refuses a connected one.
    private var awaitingDriver: [String: ManagedDevice] = [:]
    /// The waits of `awaitingDriver`, by address; `stopAll` ends them.
    private var detections: [String: Task<Void, Never>] = [:]
    /// The running scan (one at a time): its discovery lease, the task that reads the model's events, what it found,
    /// when it ends, and the timer its request waits on (cancelled by `scan/stop`, which ends the wait early).
    private var scan: (lease: DiscoveryCoordinator.Lease?, task: Task<Void, Never>, found: [String: [String: DeviceValue]],
                       ends: ContinuousClock.Instant, timer: Task<Void, Never>)?
    private var pairings: [String: PairingFlow] = [:]
    private var signalStrength = SignalStrengthReports()
    private var signalWatch: Task<Void, Never>?
    /// Handed to every session's link, so drivers can wait until their records are stored (`emitDurably`).
    private let durableRecords: DurableRecords
    /// In a site of gateways (docs/roaming.md) every gateway manages the site's devices but only the owner connects
    /// one: the ids this gateway holds. nil when the gateway is alone, and then it holds every managed device.
    private var held: Set<String>?
    /// Every RSSI reading of a managed device, uncalmed: a site's sighting reports are made of them.
    private var onHeard: (@Sendable (_ id: String, _ rssi: Int) -> Void)?
    private var siteListening: Task<Void, Never>?
    private var siteLease: DiscoveryCoordinator.Lease?

    public init(bluez: any BluetoothCentral, registry: DriverRegistry, store: DeviceStore, filter: DeviceFilter,
                adapter: AdapterSelector?, firmwarePackages: Configuration.DFUSection = .init(),
                output: @escaping @Sendable (ManagerOutput) -> Void, durableRecords: DurableRecords = .immediate,
                logger: Logger) {
        self.durableRecords = durableRecords
        self.firmwarePackages = firmwarePackages
        self.bluez = bluez
        self.registry = registry
        self.store = store
        self.filter = filter
        self.adapterSelector = adapter
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
        var all: [String: ManagedDevice] = [:]
        var undetected: [ManagedDevice] = []
        let stored = (try? store.load()) ?? []
        for device in configured {
            if device.needsDriverDetection, !stored.contains(where: { $0.address == device.address }) {
                undetected.append(device)
                awaitingDriver[device.address] = device
            } else {
                all[device.id.isEmpty ? device.address : device.id] = device
            }
        }
        for device in stored where !all.values.contains(where: { $0.address == device.address }) && !undetected.contains(where: { $0.address == device.address }) {
            all[device.id] = device
        }
        for device in stored {
            // A rename, options or a configuration given over MQTT to a configured device outlive a restart, and so
            // does the driver detected for one that names none.
            if let key = all.first(where: { $0.value.address == device.address && $0.value.fromConfiguration })?.key {
                var merged = all.removeValue(forKey: key)!
                merged.id = device.id
                merged.name = device.name ?? merged.name
                merged.options = configuredOptions[device.address]?.applied(to: device.options) ?? device.options
                merged.configure = device.configure ?? merged.configure
                if merged.needsDriverDetection { merged.driver = device.driver }
                all[merged.id] = merged
            }
        }
        beforeSessions(Set(all.values.map(\.id)))
        for device in all.values { startSession(device) }
        for device in undetected { detectDriver(of: device) }
        output(.deviceListChanged)
        watchSignalStrength()
    }

    /// Puts the RSSI BlueZ reports for a managed device into its state (`rssi`), calmed by `SignalStrengthReports`.
    private func watchSignalStrength() {
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

    private func heard(_ address: BluetoothAddress, rssi: Int) {
        guard let device = devices.values.first(where: { $0.address == address.rawValue }) else { return }
        onHeard?(device.id, rssi)
        guard signalStrength.report(rssi, device: device.id, at: .now) else { return }
        output(.device(id: device.id, .event(.state(["rssi": .integer(Int64(rssi))]))))
    }

    /// Waits until BlueZ has seen `device` advertise (discovering while waiting, retrying every minute while it
    /// is away), then manages it with the driver its advertisement matches best, or `standard`.
    private func detectDriver(of device: ManagedDevice) {
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
                _ = await bluez.wait(timeout: .seconds(30)) { $0.device(address: address) != nil }
                await discovery.release(lease)
                if bluez.model.device(address: address) == nil {
                    // Away: wait for it to show up by itself (another scan) before discovering again.
                    _ = await bluez.wait(timeout: .seconds(60)) { $0.device(address: address) != nil }
                }
            }
        }
    }

    private func detected(_ device: ManagedDevice, driver: String) {
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
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    public var managedDevices: [ManagedDevice] { devices.values.sorted { $0.id < $1.id } }

    public func session(id: String) -> DeviceSession? { sessions[managedID(id)] }

    public func connectionState(id: String) async -> ConnectionState { await sessions[managedID(id)]?.state ?? .disconnected }

    /// The one place a device becomes managed, so the rule "one managed entry per address" holds here: two sessions
    /// on one address would fight over its notifications ("Notify acquired") and leave both in InProgress.
    private func startSession(_ device: ManagedDevice) {
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
            adapter: { try? bluez.adapter(selector) }, discovery: discovery,
            output: { output(.device(id: id, $0)) },
            logger: logger, storage: storage, firmwarePackages: firmwarePackages, durableRecords: durableRecords)
        sessions[id] = session
        // Unstructured: `start` is the session actor's; adding a device must not wait for it.
        Task { await session.start() }
    }

    // MARK: A site of gateways

    /// From now on a device is connected only once `hold` names it (docs/roaming.md). Call before `start`.
    public func joinSite(onHeard: @escaping @Sendable (_ id: String, _ rssi: Int) -> Void) {
        held = held ?? []
        self.onHeard = onHeard
        // Unstructured: listens for the site while the gateway is in one; kept in `siteListening`, cancelled on leaving.
        siteListening = Task { [weak self] in await self?.listenForTheSite() }
    }

    /// Keeps discovery running for as long as the gateway is in a site: every gateway must hear every device, the
    /// ones it does not hold above all, or the device could never move to it.
    private func listenForTheSite() async {
        while !Task.isCancelled {
            if let adapter {
                siteLease = await discovery.acquire(adapter: adapter.path)
                return
            }
            let bluez = bluez, selector = adapterSelector
            _ = await bluez.wait(timeout: .seconds(5)) { _ in (try? bluez.adapter(selector)) != nil }
        }
    }

    public var holdsOnlyAssigned: Bool { held != nil }

    /// This gateway owns `id` now: stores what the previous owner handed over (its cursors and held configuration),
    /// then connects the device.
    public func hold(id: String, storage entries: [String: [String: DeviceValue]]?) {
        held?.insert(id)
        guard let device = devices[id], let address = BluetoothAddress(device.address) else { return }
        if let entries {
            let storage = DriverFileStorage.storage(stateDirectory: store.stateDirectory, address: address)
            for (name, entry) in entries.sorted(by: { $0.key < $1.key }) {
                do { try storage.save(name, entry) } catch {
                    logger.error("cannot store what the previous owner handed over", metadata: [
                        "id": "\(id)", "entry": "\(name)", "error": "\(error)"])
                }
            }
        }
        startSessionIfIdle(id)
    }

    /// Another gateway owns `id` now: stops its session (streams, a sync after the page it is committing, waiting
    /// at most `commitWait` for that) and disconnects it, then answers the driver's stored entries for the handoff;
    /// `credentials` only when `sharingCredentials`.
    public func release(id: String, sharingCredentials: Bool, commitWait: Duration) async -> [String: [String: DeviceValue]] {
        held?.remove(id)
        if let session = sessions.removeValue(forKey: id) { await session.stop(commitWait: commitWait) }
        guard let device = devices[id], let address = BluetoothAddress(device.address) else { return [:] }
        return DriverFileStorage.entries(stateDirectory: store.stateDirectory, address: address,
                                         excluding: sharingCredentials ? [] : ["credentials"])
    }

    /// A device of the site's registry that this gateway does not manage yet (added on another gateway), or a newer
    /// entry for one it does (renamed elsewhere: the old id is retired by its own registry deletion): managed from
    /// now on, and held only if assigned here. Nothing is answered and no bridge event is sent; the gateway that
    /// took the request did both.
    public func adopt(_ device: ManagedDevice) {
        if let current = devices[device.id], current == device { return }
        if let other = devices.values.first(where: { $0.address == device.address && $0.id != device.id }) {
            logger.warning("not adopting a registry entry for an address managed under another id", metadata: [
                "id": "\(device.id)", "address": "\(device.address)", "managed_as": "\(other.id)"])
            return
        }
        var list = devices
        list[device.id] = device
        do { try saveBeforeChanging(list) } catch {
            logger.error("cannot store a device of the site's registry", metadata: ["id": "\(device.id)", "error": "\(error)"])
            return
        }
        devices[device.id] = device
        if sessions[device.id] == nil { startSession(device) }
        output(.deviceListChanged)
    }

    /// Starts a session on the device's current entry after a wait for the old one to stop, unless a request that
    /// ran during the wait already started one, or removed or renamed the device: one session per device, always.
    private func startSessionIfIdle(_ id: String) {
        guard sessions[id] == nil, let device = devices[id] else { return }
        startSession(device)
    }

    private func persist() {
        do {
            try store.save(Array(devices.values))
        } catch {
            logger.error("cannot save the device list", metadata: ["path": "\(store.path)", "error": "\(error)"])
        }
    }

    /// Saves `list` as the device list before a request changes it, so that what was answered ok survives a
    /// restart: a full or unwritable state folder refuses the change instead (logged, and `INTERNAL` naming the
    /// cause, such as "No space left on device").
    private func saveBeforeChanging(_ list: [String: ManagedDevice]) throws(CommandError) {
        do {
            try store.save(Array(list.values))
        } catch {
            let cause = "\(error)"
            logger.error("cannot save the device list; the change is refused", metadata: ["path": "\(store.path)", "error": "\(cause)"])
            throw CommandError(.internalError, "the device list cannot be saved in the state folder (\(cause)); nothing was changed")
        }
    }

    // MARK: Bridge requests

    /// `device/add`: manage a device by address, with a driver chosen from its advertisement if not given (`standard`
    /// when the device does not advertise within 10 s).
    public func add(address text: String, driver requested: String?, name: String?) async throws(CommandError) -> ManagedDevice {
        guard let address = BluetoothAddress(text) else {
            throw .invalidValue(field: "address", "\"\(text)\" is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
        }
        try refuseManaged(address)
        let driver: String
        if let requested {
            guard registry.driver(named: requested) != nil else {
                throw .invalidValue(field: "driver", "no driver named \(requested); known: \(registry.drivers.map { $0.name }.joined(separator: ", "))")
            }
            driver = requested
        } else {
            // The advertisement decides; a device BlueZ has not seen yet gets up to 10 s of discovery to show it.
            if bluez.model.device(address: address) == nil, let adapter {
                let lease = await discovery.acquire(adapter: adapter.path)
                _ = await bluez.wait(timeout: .seconds(10)) { $0.device(address: address) != nil }
                await discovery.release(lease)
            }
            driver = (bluez.model.device(address: address).flatMap { registry.bestMatch(for: $0) } ?? registry.fallback).name
            // Another request may have added it while this one waited.
            try refuseManaged(address)
        }
        guard filter.permits(address: address, driver: driver) else {
            throw CommandError(.forbidden, "\(address) with driver \(driver) is not allowed by the configuration's allow/deny lists")
        }
        let id = name ?? "\(driver)_\(address.compactLowercase)"
        guard !idTaken(id) else { throw .invalidValue(field: "name", "\(id) is already the id of another device (ids are compared in any case)") }
        let device = ManagedDevice(id: id, address: address.rawValue, driver: driver, name: name)
        var list = devices
        list[id] = device
        try saveBeforeChanging(list)
        startSession(device)
        output(.deviceListChanged)
        output(.bridgeEvent(type: "device_added", data: ["id": .text(id), "address": .text(address.rawValue), "driver": .text(driver)]))
        return device
    }

    /// `device/add` `{"serial"}`: the device a scan saw advertising this serial (case-insensitive). None is
    /// `DEVICE_NOT_FOUND` with the ActiGraph SDK's code 1, as its `connectToDevice:serial` answers.
    public func add(serial: String, driver: String?, name: String?) async throws(CommandError) -> ManagedDevice {
        let wanted = serial.uppercased()
        let seen = bluez.model.devices.values.first { info in
            (adapter == nil || info.adapter == adapter?.path)
                && registry.drivers.contains { $0.serial(of: info)?.uppercased() == wanted }
        }
        guard let seen, let address = seen.address else {
            throw CommandError(.deviceNotFound, "no device advertising serial \(serial) was found; scan first (bridge/request/scan) "
                               + "with the device in range", vendorCode: 1)
        }
        return try await add(address: address.rawValue, driver: driver, name: name)
    }

    /// Adding a device already managed is `INVALID_VALUE`, with the vendor's "already connected" code when its
    /// driver has one (the ActiGraph SDK's 10).
    private func refuseManaged(_ address: BluetoothAddress) throws(CommandError) {
        if awaitingDriver[address.rawValue] != nil {
            throw CommandError(.invalidValue, "address: \(address) is already managed: config.yaml lists it, and it waits to be seen "
                               + "advertising to choose its driver")
        }
        guard let existing = devices.values.first(where: { $0.address == address.rawValue }) else { return }
        let code = registry.driver(named: existing.driver)?.existingConnectionVendorCode
        throw CommandError(.invalidValue, "address: \(address) is already managed as \(existing.id)", vendorCode: code)
    }

    /// `announce` false: the site's registry removed it and the gateway that took the request announced it.
    public func remove(id requested: String, announce: Bool = true) async throws(CommandError) {
        let id = managedID(requested)
        guard devices[id] != nil else { throw notFound(requested) }
        var list = devices
        list[id] = nil
        try saveBeforeChanging(list)
        guard let device = devices.removeValue(forKey: id) else { throw notFound(id) }
        signalStrength.forget(id)
        await sessions.removeValue(forKey: id)?.stop()
        if let address = BluetoothAddress(device.address), let adapter, let seen = bluez.model.device(address: address, adapter: adapter.path) {
            try? await bluez.removeDevice(seen.path, adapter: adapter.path)
        }
        if let address = BluetoothAddress(device.address) {
            DriverFileStorage.forget(stateDirectory: store.stateDirectory, address: address)
        }
        output(.deviceRetired(id: id))
        output(.deviceListChanged)
        if announce { output(.bridgeEvent(type: "device_removed", data: ["id": .text(id), "address": .text(device.address)])) }
    }

    /// A rename to the device's own id changes nothing and keeps it connected. The new id is taken before the
    /// old session is stopped, so a request arriving meanwhile sees one entry for the address, under the new id.
    public func rename(id requested: String, to name: String) async throws(CommandError) {
        let id = managedID(requested)
        guard var device = devices[id] else { throw notFound(requested) }
        if name == id { return }
        guard !idTaken(name, except: id) else {
            throw .invalidValue(field: "name", "\(name) is already the id of another device (ids are compared in any case)")
        }
        device.id = name
        device.name = name
        var list = devices
        list[id] = nil
        list[name] = device
        try saveBeforeChanging(list)
        devices = list
        if let running = sessions.removeValue(forKey: id) { await running.stop() }
        startSessionIfIdle(name)
        output(.deviceRetired(id: id))
        output(.deviceListChanged)
    }

    public func setOptions(id requested: String, options: DeviceOptions) async throws(CommandError) {
        let id = managedID(requested)
        guard var device = devices[id] else { throw notFound(requested) }
        device.options = options
        var list = devices
        list[id] = device
        try saveBeforeChanging(list)
        devices = list
        if let running = sessions.removeValue(forKey: id) { await running.stop() }
        startSessionIfIdle(id)
        output(.deviceListChanged)
    }

    public func options(id: String) throws(CommandError) -> DeviceOptions {
        guard let device = device(id) else { throw notFound(id) }
        return device.options
    }

    private func notFound(_ id: String) -> CommandError {
        DeviceIdentifier.notFound(id)
    }

    /// The session of a managed device, or why there is none: a device of a site this gateway does not hold yet
    /// (its handover under way, or another gateway holds it) is `DEVICE_DISCONNECTED`, not unknown.
    private func runningSession(_ id: String, requested: String) throws(CommandError) -> DeviceSession {
        if let session = sessions[id] { return session }
        guard devices[id] != nil else { throw notFound(requested) }
        throw CommandError(.deviceDisconnected, "\(id) is not connected to this gateway yet (in a site, its handover to this "
                           + "gateway is under way); try again in a few seconds")
    }

    /// The id under which the device `id` names is managed, compared without regard to case
    /// (`DeviceIdentifier.same`); `id` itself when none is.
    public func managedID(_ id: String) -> String {
        if devices[id] != nil { return id }
        return devices.keys.first { DeviceIdentifier.same($0, id) } ?? id
    }

    /// The device `id` names, compared without regard to case.
    public func device(_ id: String) -> ManagedDevice? { devices[managedID(id)] }

    /// Whether `id` is already the id of a device other than `except`, in any case.
    private func idTaken(_ id: String, except: String? = nil) -> Bool {
        devices.keys.contains { DeviceIdentifier.same($0, id) && $0 != except }
    }

    public func execute(_ command: DeviceCommand, id requested: String) async throws(CommandError) -> DeviceValue {
        let id = managedID(requested)
        let session = try runningSession(id, requested: requested)
        let result = try await session.execute(command)
        // The driver answers `configure` with the whole configuration it now applies on every connection:
        // kept, so a restart of the gateway brings the sensors back without a new request.
        if case .configure = command, let applied = result.object, devices[id] != nil {
            devices[id]?.configure = applied
            persist()
        }
        return result
    }

    /// `request/dfu` with a checked package: runs now or when the device next connects.
    public func updateFirmware(_ order: FirmwareUpdateOrder, id: String) async throws(CommandError) -> DeviceValue {
        let id = managedID(id)
        let session = try runningSession(id, requested: id)
        return try await session.updateFirmware(order)
    }

    public func cancelFirmwareUpdate(id: String) async throws(CommandError) -> DeviceValue {
        let id = managedID(id)
        let session = try runningSession(id, requested: id)
        return await session.cancelFirmwareUpdate()
    }

    // MARK: Scanning

    /// Scans for `duration`, reporting each device once as `device_found` (and again when its RSSI moves by
    /// 10 dB or more); the answer lists everything found, when the time is up or `scan/stop` ends it early.
    /// One scan at a time: another while one runs is `BUSY` (it would share the adapter's discovery with another
    /// filter, and its end would end the first).
    public func scan(duration: Duration, filter scanFilter: DiscoveryFilter) async throws(CommandError) -> [[String: DeviceValue]] {
        guard let adapter else { throw CommandError(.adapterUnavailable, "no Bluetooth adapter") }
        guard adapter.powered else { throw CommandError(.adapterUnavailable, "adapter \(adapter.id) is powered off") }
        if let running = scan {
            let left = max(1, Int(((running.ends - .now) / .seconds(1)).rounded(.up)))
            throw CommandError(.busy, "a scan is running for another \(left) s (one at a time); what it finds is on bridge/event "
                               + "as device_found, or send bridge/request/scan/stop first")
        }
        // Unstructured: the scan's deadline, outliving the request that started it; cancelled by scan/stop.
        let timer = Task<Void, Never> { try? await Task.sleep(for: duration) }
        // Taken before the first suspension, so a second request arriving meanwhile sees this one running.
        scan = (lease: nil, task: Task {}, found: [:], ends: .now + duration, timer: timer)
        let lease = await discovery.acquire(adapter: adapter.path, filter: scanFilter)
        let updates = bluez.events()
        // Unstructured: the scan's event reader, outliving the request that started it; cancelled when the scan ends.
        let task = Task { [weak self] in
            for await event in updates {
                switch event {
                case .deviceAdded(let info), .deviceChanged(let info, _):
                    await self?.found(info)
                default: break
                }
            }
        }
        guard scan?.timer == timer else {
            // Stopped while discovery was starting.
            task.cancel()
            await discovery.release(lease)
            return []
        }
        scan?.lease = lease
        scan?.task = task
        for info in bluez.model.devices.values where info.adapter == adapter.path && info.rssi != nil { found(info) }
        await timer.value
        let result = Array(scan?.found.values ?? finishedScan.values)
        if scan?.timer == timer { stopScan() }
        return result.sorted { ($0["address"]?.text ?? "") < ($1["address"]?.text ?? "") }
    }

    /// What the last scan found when `scan/stop` ended it, for the request that waits on it.
    private var finishedScan: [String: [String: DeviceValue]] = [:]

    public func stopScan() {
        guard let current = scan else { return }
        scan = nil
        finishedScan = current.found
        current.timer.cancel()
        current.task.cancel()
        // A scan stopped while its discovery was starting has no lease yet: `scan` lets go of it when it comes.
        guard let lease = current.lease else { return }
        let discovery = discovery
        // Unstructured: stopping a scan is synchronous; releasing its discovery lease is the discovery actor's.
        Task { await discovery.release(lease) }
    }

    private func found(_ info: DeviceInfo) {
        guard scan != nil, let address = info.address else { return }
        let driver = registry.bestMatch(for: info)
        var entry: [String: DeviceValue] = [
            "address": .text(address.rawValue),
            "uuids": .list(info.serviceUUIDs.map(DeviceValue.text)),
            "managed": .flag(devices.values.contains { $0.address == address.rawValue }),
        ]
        if let name = info.name ?? info.alias { entry["name"] = .text(name) }
        if let rssi = info.rssi { entry["rssi"] = .integer(Int64(rssi)) }
        if let driver {
            entry["driver"] = .text(driver.name)
            if let serial = driver.serial(of: info) { entry["serial"] = .text(serial) }
        }
        let previous = scan?.found[address.rawValue]
        scan?.found[address.rawValue] = entry
        let moved = abs((previous?["rssi"]?.integer ?? 0) - (entry["rssi"]?.integer ?? 0)) >= 10
        if previous == nil || moved {
            output(.bridgeEvent(type: "device_found", data: entry))
        }
    }

    // MARK: Pairing

    /// `device/pair`: starts BlueZ pairing; answers `code_required` when the device wants a passkey typed in
    /// (then `device/pair/confirm` continues), `paired` when it needed none.
    /// A driver whose devices pair in their own protocol (GoFIT's code on the band) takes both requests itself,
    /// as its commands `pair` and `pair_confirm`, on the connected link.
    public func pair(id: String) async throws(CommandError) -> DeviceValue {
        let id = managedID(id)
        guard let device = devices[id], let address = BluetoothAddress(device.address) else { throw notFound(id) }
        if pairsInDriver(device), let session = sessions[id] {
            return try await session.execute(.named(PairingMethod.showCodeCommand, [:]))
        }
        guard let adapter, let info = bluez.model.device(address: address, adapter: adapter.path) else {
            throw CommandError(.deviceDisconnected, "BlueZ has not seen \(id) yet; bring it in range and try again")
        }
        if info.paired { return .object(["state": "paired"]) }
        let flow = PairingFlow()
        pairings[info.path.rawValue] = flow
        let bluez = bluez
        let path = info.path
        // Unstructured: pairing outlives the request while the agent asks for the code; `flow` answers the request.
        Task {
            do throws(BlueZError) {
                try await bluez.pair(path)
                await flow.finish(.success(()))
            } catch {
                await flow.finish(.failure(CommandError(.pairingFailed, "pairing failed: \(error)")))
            }
        }
        let first = await flow.firstOutcome()
        switch first {
        case .codeRequired: return .object(["state": "code_required"])
        case .finished(.success): pairings[path.rawValue] = nil; output(.bridgeEvent(type: "device_paired", data: ["id": .text(id)])); return .object(["state": "paired"])
        case .finished(.failure(let error)): pairings[path.rawValue] = nil; throw error
        }
    }

    /// `device/pair/confirm`: the code the user read on the device.
    public func confirmPairing(id: String, code: String) async throws(CommandError) -> DeviceValue {
        let id = managedID(id)
        if let device = devices[id], pairsInDriver(device), let session = sessions[id] {
            let result = try await session.execute(.named(PairingMethod.confirmCodeCommand, ["code": .text(code)]))
            output(.bridgeEvent(type: "device_paired", data: ["id": .text(id)]))
            return result
        }
        guard let device = devices[id], let address = BluetoothAddress(device.address),
              let info = bluez.model.device(address: address), let flow = pairings[info.path.rawValue] else {
            throw CommandError(.invalidValue, "id: no pairing of \(id) is waiting for a code; send device/pair first")
        }
        guard let passkey = UInt32(code), code.count <= 6 else {
            throw .invalidValue(field: "code", "must be the digits shown on the device")
        }
        await flow.provide(passkey)
        let outcome = await flow.completion()
        pairings[info.path.rawValue] = nil
        switch outcome {
        case .success:
            output(.bridgeEvent(type: "device_paired", data: ["id": .text(id)]))
            return .object(["state": "paired"])
        case .failure(let error): throw error
        }
    }

    private func pairsInDriver(_ device: ManagedDevice) -> Bool {
        registry.driver(named: device.driver)?.driverDescription.pairing == .codeShownOnDevice
    }

    /// The agent's handler: BlueZ asks while a `device/pair` is running.
    public func answer(_ request: PairingRequest) async -> PairingAnswer {
        switch request {
        case .passkey(let device):
            guard let flow = pairings[device.rawValue] else { return .reject }
            return await flow.waitForPasskey().map(PairingAnswer.passkey) ?? .reject
        case .confirmation(let device, _), .authorization(let device):
            return pairings[device.rawValue] != nil ? .accept : .reject
        case .serviceAuthorization(let device, _):
            return devices.values.contains { BluetoothAddress($0.address).map { bluez.model.device(address: $0)?.path == device } ?? false } ? .accept : .reject
        case .pinCode, .displayPasskey, .displayPinCode:
            return .reject
        }
    }
}

/// One pairing in progress: BlueZ's Pair call on one side, the MQTT requests on the other.
actor PairingFlow {
    enum Outcome { case codeRequired, finished(Result<Void, CommandError>) }

    private var result: Result<Void, CommandError>?
    private var passkey: UInt32?
    private var passkeyWanted = false
    private var outcomeWaiters: [CheckedContinuation<Outcome, Never>] = []
    private var completionWaiters: [CheckedContinuation<Result<Void, CommandError>, Never>] = []
    private var passkeyWaiters: [CheckedContinuation<UInt32?, Never>] = []

    func firstOutcome() async -> Outcome {
        if let result { return .finished(result) }
        if passkeyWanted { return .codeRequired }
        return await withCheckedContinuation { outcomeWaiters.append($0) }
    }

    func completion() async -> Result<Void, CommandError> {
        if let result { return result }
        return await withCheckedContinuation { completionWaiters.append($0) }
    }

    /// BlueZ's agent asks: wait (up to two minutes) for the user's code.
    func waitForPasskey() async -> UInt32? {
        if let passkey { return passkey }
        passkeyWanted = true
        for waiter in outcomeWaiters { waiter.resume(returning: .codeRequired) }
        outcomeWaiters.removeAll()
        return await withCheckedContinuation { passkeyWaiters.append($0) }
    }

    func provide(_ code: UInt32) {
        passkey = code
        for waiter in passkeyWaiters { waiter.resume(returning: code) }
        passkeyWaiters.removeAll()
    }

    func finish(_ outcome: Result<Void, CommandError>) {
        result = outcome
        for waiter in outcomeWaiters { waiter.resume(returning: .finished(outcome)) }
        outcomeWaiters.removeAll()
        for waiter in completionWaiters { waiter.resume(returning: outcome) }
        completionWaiters.removeAll()
        for waiter in passkeyWaiters { waiter.resume(returning: nil) }
        passkeyWaiters.removeAll()
    }
}
