import BlueZ
import DBus
import Logging
import Wearables
import SimulatedWearables

/// The simulated bluetoothd: one adapter (`/org/bluez/hci0`), AgentManager1 (`/org/bluez`), and the Device1 and
/// GATT objects of the simulated devices it discovers and connects to, behaving as BlueZ 5.66 does on the
/// D-Bus side (which signal comes before which reply, which error for which state). docs/simulator.md lists
/// what is modeled and where behaviour was chosen rather than established.
///
/// One actor owns all state, so every method call, timer and device notification is applied in one order.
/// Methods that take time (Connect, Disconnect, Pair, GATT requests) suspend on timers; everything they depend on
/// is checked again after each suspension, because other calls run meanwhile, as in BlueZ's main loop.
actor SimulatedBluetoothDaemon {
    static let rootPath: ObjectPath = "/org/bluez"

    let bus: BusConnection
    let logger: Logger
    let settings: AdapterSettings
    let scenarioSeed: UInt64
    let adapterPath: ObjectPath = "/org/bluez/hci0"
    let sockets = SocketWatcher()

    var powered: Bool
    var adapterAlias: String
    var discoverable = false
    var discovery = DiscoverySessions()
    var agents = AgentRegistry()
    var adapterFaults = DeviceFaults()
    /// The radio's faults: a deaf scanner, a stuck discovery, the adapter removed (`RadioFaults`).
    var radioFaults = RadioFaults()
    var adapterCounts = AdapterCounts()
    var devices: [BluetoothAddress: SimulatedDevice] = [:]
    var pathToAddress: [ObjectPath: BluetoothAddress] = [:]
    var scanTask: Task<Void, Never>?
    /// Loops that run for the simulator's lifetime (expiry, client watcher).
    var backgroundTasks: [Task<Void, Never>] = []
    /// One-shot timers and agent calls under way, by id; each removes itself when done.
    var pendingTasks: [Int: Task<Void, Never>] = [:]
    var nextTaskID = 1
    var nextPairingID = 1
    private var characteristicDefinition: InterfaceDefinition?
    private var descriptorDefinition: InterfaceDefinition?

    init(bus: BusConnection, scenario: Scenario, logger: Logger) {
        self.bus = bus
        self.logger = logger
        settings = scenario.adapter
        scenarioSeed = scenario.seed
        powered = scenario.adapter.powered
        adapterAlias = scenario.adapter.name
    }

    var objects: ObjectRegistry { bus.objects }

    /// Builds the simulated devices and their companions and exports what bluetoothd exports at start: the
    /// ObjectManager at `/`, AgentManager1, the adapter, and the devices it remembers (paired ones).
    func setUp(devices deviceSettings: [DeviceSettings]) async throws(ScenarioError) {
        characteristicDefinition = BlueZInterfaces.characteristicDefinition(self)
        descriptorDefinition = BlueZInterfaces.descriptorDefinition(self)
        var companions: [(placement: CompanionPlacement, companion: SimulatedCompanion)] = []
        for (index, settings) in deviceSettings.enumerated() {
            let configuration = settings.configuration(scenarioSeed: scenarioSeed)
            let peripheral: any SimulatedPeripheral
            do {
                peripheral = try settings.kind.make(configuration)
            } catch {
                throw ScenarioError(key: "devices[\(index)].options.\(error.key)", reason: error.description)
            }
            add(SimulatedDevice(settings: settings, peripheral: peripheral, kindName: settings.kind.name, adapterPath: adapterPath,
                                deviceDefinition: BlueZInterfaces.deviceDefinition(self, address: settings.address),
                                seed: configuration.seed ^ 0x5EED))
            if let companion = peripheral.companion {
                companions.append((CompanionPlacement(host: index, hostAddress: settings.address, offset: companion.addressOffset,
                                                      kind: companion.kind), companion))
            }
        }
        if let clash = CompanionPlacement.firstClash(companions.map(\.placement), devices: deviceSettings.map(\.address)) {
            throw ScenarioError(key: "devices[\(clash.device ?? clash.placement.host)].address",
                                reason: CompanionPlacement.reason(clash.placement, takes: clash.device))
        }
        for (placement, companion) in companions {
            addCompanion(companion, at: placement.address, of: deviceSettings[placement.host])
        }
        objects.addObjectManager(at: "/")
        objects.export(Self.rootPath, interfaces: [(BlueZInterfaces.agentManagerDefinition(self), [:])])
        objects.export(adapterPath, interfaces: [(BlueZInterfaces.adapterDefinition(self), adapterProperties())])
        exportStoredDevices()
        let expiry = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                await self?.expireTemporaryDevices()
            }
        }
        backgroundTasks.append(expiry)
        do {
            let watcher = try await BusClientWatcher.start(on: bus) { [weak self] client in await self?.clientLeft(client) }
            backgroundTasks.append(watcher)
        } catch {
            logger.warning("cannot watch clients leaving the bus: \(error)")
        }
    }

    private func add(_ device: SimulatedDevice) {
        devices[device.address] = device
        pathToAddress[device.path] = device.address
    }

    /// A device for `companion`, silent and unknown to BlueZ until its host switches to it, and the task that
    /// follows the host's switches.
    private func addCompanion(_ companion: SimulatedCompanion, at address: BluetoothAddress, of host: DeviceSettings) {
        let settings = host.companionSettings(at: address)
        let device = SimulatedDevice(settings: settings, peripheral: companion.peripheral, kindName: companion.kind,
                                     adapterPath: adapterPath,
                                     deviceDefinition: BlueZInterfaces.deviceDefinition(self, address: address),
                                     seed: settings.configuration(scenarioSeed: scenarioSeed).seed ^ 0x5EED)
        devices[host.address]?.companionAddress = address
        add(device)
        let hostAddress = host.address
        backgroundTasks.append(Task { [weak self] in
            for await radio in companion.radio {
                await self?.switchRadio(host: hostAddress, to: radio)
            }
        })
    }

    /// Stops timers, behaviours and sockets. The bus connection is closed by the owner.
    func shutDown() {
        scanTask?.cancel()
        for task in backgroundTasks { task.cancel() }
        for task in pendingTasks.values { task.cancel() }
        pendingTasks = [:]
        for device in devices.values {
            device.behaviour?.cancel()
            for waiter in device.connectWaiters { waiter.resume(returning: .failure(.failed("Cancelled"))) }
            device.connectWaiters = []
            for waiter in device.disconnectWaiters { waiter.resume() }
            device.disconnectWaiters = []
            for waiter in device.resolutionWaiters { waiter.resume(returning: false) }
            device.resolutionWaiters = []
            device.commands.abandon()
            if let waiter = device.pairing?.waiter { waiter.resume(returning: .failure(.authenticationCanceled)) }
            device.pairing = nil
        }
        sockets.stop()
        // The devices and the interface definitions hold handlers that hold this daemon: a daemon shut down is
        // done with them, and keeping them would keep it (a scenario that failed to set up leaked whole, issue 24).
        devices = [:]
        pathToAddress = [:]
        characteristicDefinition = nil
        descriptorDefinition = nil
    }

    // MARK: Lookup

    func device(_ address: BluetoothAddress) throws(BlueZErrorReply) -> SimulatedDevice {
        guard let device = devices[address], device.isExported else {
            throw BlueZErrorReply(name: "org.freedesktop.DBus.Error.UnknownObject", message: "no device \(address)")
        }
        return device
    }

    /// The simulated device (exported or not) with `address`, for the control interface.
    func simulatedDevice(_ address: BluetoothAddress) throws(BlueZErrorReply) -> SimulatedDevice {
        guard let device = devices[address] else { throw ControlError.noSuchDevice(address) }
        return device
    }

    /// The device whose GATT object lives at `path`, and the path relative to the device.
    func gattObject(_ path: ObjectPath) throws(BlueZErrorReply) -> (SimulatedDevice, String) {
        var candidate: ObjectPath? = path
        while let current = candidate, current != adapterPath {
            if let address = pathToAddress[current], let device = devices[address], let relative = device.relativePath(of: path) {
                return (device, relative)
            }
            candidate = current.parent
        }
        throw BlueZErrorReply(name: "org.freedesktop.DBus.Error.UnknownObject", message: "no GATT object at \(path)")
    }

    // MARK: Timing and faults

    /// What every BlueZ method does first here: an injected one-shot failure, then the injected latency.
    func applyFaults(_ device: SimulatedDevice?, method: String) async throws(BlueZErrorReply) {
        let failure: BlueZErrorReply?
        let latency: Duration
        if let device {
            failure = device.faults.takeFailure(for: method)
            latency = device.faults.latency
        } else {
            failure = adapterFaults.takeFailure(for: method)
            latency = adapterFaults.latency
        }
        if let failure { throw failure }
        if latency > .zero { await pause(latency) }
    }

    func pause(_ duration: Duration) async {
        try? await Task.sleep(for: duration)
    }

    /// Runs `body` on this actor after `delay`, unless the simulator stops first.
    func schedule(after delay: Duration, _ body: @escaping @Sendable (isolated SimulatedBluetoothDaemon) async -> Void) {
        track { daemon in
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { return }
            await body(daemon)
        }
    }

    /// Starts `body` as a task that `shutDown` cancels and that forgets itself when it ends.
    func track(_ body: @escaping @Sendable (SimulatedBluetoothDaemon) async -> Void) {
        let id = nextTaskID
        nextTaskID += 1
        pendingTasks[id] = Task { [weak self] in
            guard let self else { return }
            await body(self)
            await self.forgetTask(id)
        }
    }

    private func forgetTask(_ id: Int) { pendingTasks[id] = nil }

    // MARK: Object properties

    func adapterProperties() -> [String: DBusValue] {
        [
            "Address": .string(settings.address.description),
            "AddressType": "public",
            "Name": .string(settings.name),
            "Alias": .string(adapterAlias),
            "Class": .uint32(0),
            "Powered": .boolean(powered),
            "Discoverable": .boolean(discoverable),
            "DiscoverableTimeout": .uint32(180),
            "Pairable": true,
            "PairableTimeout": .uint32(0),
            "Discovering": .boolean(discovery.isDiscovering),
            "UUIDs": .strings(["00001800-0000-1000-8000-00805f9b34fb", "00001801-0000-1000-8000-00805f9b34fb",
                               "0000180a-0000-1000-8000-00805f9b34fb"]),
            // bluetoothd's default Device ID: Linux Foundation (0x1d6b), BlueZ (0x0246), version 5.66 (0x0542).
            "Modalias": "usb:v1D6Bp0246d0542",
            "Roles": .strings(["central", "peripheral"]),
        ]
    }

    func setAdapterProperty(_ name: String, _ value: DBusValue) {
        objects.object(at: adapterPath)?.setProperty(name, value, interface: BlueZInterfaces.adapter)
    }

    func setDeviceProperties(_ device: SimulatedDevice, _ values: [String: DBusValue]) {
        guard device.isExported else { return }
        objects.object(at: device.path)?.setProperties(values, interface: BlueZInterfaces.device)
    }

    /// The Device1 properties of a device that BlueZ has just come to know.
    func deviceProperties(_ device: SimulatedDevice) -> [String: DBusValue] {
        var values: [String: DBusValue] = [
            "Address": .string(device.address.description),
            "AddressType": .string(device.settings.addressType),
            "Alias": .string(device.effectiveAlias),
            "Paired": .boolean(device.paired),
            "Bonded": .boolean(device.bonded),
            "Trusted": .boolean(device.trusted),
            "Blocked": .boolean(device.blocked),
            "LegacyPairing": false,
            "Connected": .boolean(device.link.isConnected),
            "UUIDs": .strings(deviceUUIDs(device).map(\.string)),
            "Adapter": .objectPath(adapterPath),
            "ServicesResolved": .boolean(device.servicesResolved),
        ]
        if let name = device.knownName { values["Name"] = .string(name) }
        if let appearance = device.knownAppearance {
            values["Appearance"] = .uint16(appearance)
            if let icon = Self.icon(forAppearance: appearance) { values["Icon"] = .string(icon) }
        }
        if let rssi = device.reportedRSSI { values["RSSI"] = .int16(Int16(rssi)) }
        if device.lastSeen != nil {
            let advertisement = device.advertisement
            values["AdvertisingFlags"] = .bytes([advertisement.flags])
            if let power = advertisement.txPower { values["TxPower"] = .int16(Int16(power)) }
            if !advertisement.manufacturerData.isEmpty { values["ManufacturerData"] = advertisement.bluezManufacturerData }
            if !advertisement.serviceData.isEmpty { values["ServiceData"] = advertisement.bluezServiceData }
        }
        return values
    }

    /// BlueZ's `UUIDs`: the resolved services once resolved (or remembered from pairing), else the advertised.
    func deviceUUIDs(_ device: SimulatedDevice) -> [BluetoothUUID] {
        device.servicesResolved || device.paired ? device.layout.resolvedUUIDs : device.advertisedUUIDs
    }

    /// `gap_appearance_to_icon` (`src/dbus-common.c` in 5.66): only these categories have icons, so none of the
    /// simulated wearables shows one.
    static func icon(forAppearance appearance: UInt16) -> String? {
        switch (appearance & 0xFFC0) >> 6 {
        case 0x01: "phone"
        case 0x02: "computer"
        case 0x05: "video-display"
        case 0x0A: "multimedia-player"
        case 0x0B: "scanner"
        case 0x0F:
            switch appearance & 0x3F {
            case 0x01: "input-keyboard"
            case 0x02: "input-mouse"
            case 0x03, 0x04: "input-gaming"
            case 0x05: "input-tablet"
            case 0x08: "scanner"
            default: nil
            }
        default: nil
        }
    }

    /// Exports the device's Device1 object (InterfacesAdded).
    func exportDevice(_ device: SimulatedDevice) {
        guard !device.isExported else { return }
        device.isExported = true
        objects.export(device.path, interfaces: [(device.deviceDefinition, deviceProperties(device))])
    }

    /// The devices bluetoothd loads from its storage when an adapter registers (at start, and when a removed
    /// adapter comes back): the paired ones, without GATT objects until they connect.
    func exportStoredDevices() {
        for device in devices.values.sorted(by: { $0.address < $1.address }) where device.paired {
            exportDevice(device)
        }
    }

    /// Removes the device's object and everything below it, keeping what bluetoothd stores of it (pairing, trust,
    /// alias, name) and dropping what it only knew from the air (`device_remove(device, FALSE)`).
    func unexportDevice(_ device: SimulatedDevice) {
        guard device.isExported else { return }
        removeGATTObjects(device)
        if device.batteryExported {
            objects.remove(interfaces: [BlueZInterfaces.battery], from: device.path)
            device.batteryExported = false
        }
        objects.remove(interfaces: [BlueZInterfaces.device], from: device.path)
        device.isExported = false
        device.lastSeen = nil
        device.reportedRSSI = nil
        device.servicesResolved = false
    }

    /// Removes the device's object and everything below it (bluetoothd forgets it, bonding included).
    func forgetDevice(_ device: SimulatedDevice) {
        guard device.isExported else { return }
        unexportDevice(device)
        device.paired = false
        device.bonded = false
        device.trusted = false
        device.alias = nil
        device.temporary = true
        device.knownName = nil
        device.knownAppearance = nil
        device.advertisedUUIDs = []
    }

    // MARK: GATT objects

    func exportGATTObjects(_ device: SimulatedDevice) {
        guard !device.gattExported, let characteristicDefinition, let descriptorDefinition else { return }
        device.gattExported = true
        for service in device.layout.exportedServices {
            let servicePath = device.objectPath(service.pathElement)
            objects.export(servicePath, interfaces: [(BlueZInterfaces.serviceDefinition, [
                "UUID": .string(service.uuid.string), "Device": .objectPath(device.path),
                "Primary": .boolean(service.isPrimary), "Includes": .objectPaths([]),
            ])])
            for characteristic in service.characteristics {
                var values: [String: DBusValue] = [
                    "UUID": .string(characteristic.uuid.string), "Service": .objectPath(servicePath),
                    "Value": .bytes(device.valueCache[characteristic.relativePath] ?? []),
                    "Flags": .strings(characteristic.flags.bluezNames), "MTU": .uint16(UInt16(device.mtu)),
                ]
                if characteristic.flags.contains(.notify) || characteristic.flags.contains(.indicate) {
                    values["Notifying"] = .boolean(device.notify[characteristic.relativePath]?.notifying ?? false)
                }
                if characteristic.flags.contains(.writeWithoutResponse) { values["WriteAcquired"] = false }
                if characteristic.flags.contains(.notify) { values["NotifyAcquired"] = false }
                let characteristicPath = device.objectPath(characteristic.relativePath)
                objects.export(characteristicPath, interfaces: [(characteristicDefinition, values)])
                for descriptor in characteristic.descriptors {
                    objects.export(device.objectPath(descriptor.relativePath), interfaces: [(descriptorDefinition, [
                        "UUID": .string(descriptor.uuid.string), "Characteristic": .objectPath(characteristicPath),
                        "Value": .bytes(device.valueCache[descriptor.relativePath] ?? []),
                    ])])
                }
            }
        }
    }

    /// Removes the GATT objects as `unregister_service` does: each characteristic's descriptors, the
    /// characteristic, and the service last. Their notify sessions end with them.
    func removeGATTObjects(_ device: SimulatedDevice) {
        guard device.gattExported else { return }
        for service in device.layout.exportedServices {
            for characteristic in service.characteristics {
                for descriptor in characteristic.descriptors {
                    objects.remove(interfaces: [BlueZInterfaces.gattDescriptor], from: device.objectPath(descriptor.relativePath))
                }
                objects.remove(interfaces: [BlueZInterfaces.gattCharacteristic], from: device.objectPath(characteristic.relativePath))
                if let sessions = device.notify[characteristic.relativePath] {
                    device.notify[characteristic.relativePath] = NotifySessions(canNotify: sessions.canNotify,
                                                                                canIndicate: sessions.canIndicate)
                }
            }
            objects.remove(interfaces: [BlueZInterfaces.gattService], from: device.objectPath(service.pathElement))
        }
        device.gattExported = false
        device.valueCache = [:]
        device.descriptorValues = [:]
    }

    func setCharacteristicProperty(_ device: SimulatedDevice, _ relative: String, _ name: String, _ value: DBusValue) {
        guard device.gattExported else { return }
        objects.object(at: device.objectPath(relative))?.setProperty(name, value, interface: BlueZInterfaces.gattCharacteristic)
    }

    /// Tells the peripheral when a characteristic's subscription state (from any source) changed.
    func syncPeripheralSubscription(_ device: SimulatedDevice, _ characteristic: GATTLayout.Characteristic) async {
        let subscribed = device.link.isConnected && device.isSubscribed(characteristic)
        guard subscribed != device.peripheralSubscriptions.contains(characteristic.uuid) else { return }
        if subscribed { device.peripheralSubscriptions.insert(characteristic.uuid) } else { device.peripheralSubscriptions.remove(characteristic.uuid) }
        guard !characteristic.isHostOwned else { return }
        await device.peripheral.subscriptionChanged(characteristic.uuid, isSubscribed: subscribed)
    }

    // MARK: Clients leaving

    func clientLeft(_ client: String) async {
        if discovery.removeClient(client) { stopScanning() }
        agents.remove(owner: client)
        for device in devices.values {
            for (relative, var sessions) in device.notify {
                let turnedOff = sessions.removeClient(client)
                device.notify[relative] = sessions
                if turnedOff { setCharacteristicProperty(device, relative, "Notifying", false) }
                if let characteristic = device.layout.characteristic(atRelativePath: relative) {
                    await syncPeripheralSubscription(device, characteristic)
                }
            }
        }
    }
}
