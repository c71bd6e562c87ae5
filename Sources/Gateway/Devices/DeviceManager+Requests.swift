import BlueZ
import DBus
import FoundationEssentials
import Logging
import Wearables

/// The bridge's requests about the device list (add, remove, rename, options) and a device's commands, each refused
/// whole or done whole (the list is saved before it changes).
extension DeviceManager {
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
    func refuseManaged(_ address: BluetoothAddress) throws(CommandError) {
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

    func notFound(_ id: String) -> CommandError {
        DeviceIdentifier.notFound(id)
    }

    /// The session of a managed device, or why there is none: a device of a site this gateway does not hold yet
    /// (its handover under way, or another gateway holds it) is `DEVICE_DISCONNECTED`, not unknown.
    func runningSession(_ id: String, requested: String) throws(CommandError) -> DeviceSession {
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
    func idTaken(_ id: String, except: String? = nil) -> Bool {
        devices.keys.contains { DeviceIdentifier.same($0, id) && $0 != except }
    }

    /// `connect` (true) or `disconnect` (false): the session's own, in turn with the device's commands.
    public func setConnected(_ connected: Bool, id requested: String) async throws(CommandError) -> DeviceValue {
        let session = try runningSession(managedID(requested), requested: requested)
        return connected ? try await session.connectRequested() : try await session.disconnectRequested()
    }

    /// A command of the device's driver, run by its session over the link.
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
}
