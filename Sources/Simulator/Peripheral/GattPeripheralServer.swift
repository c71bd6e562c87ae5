import DBus
import Logging
import Wearables
import SimulatedWearables

/// Serves one simulated device through a real bluetoothd: its GATT table registered with
/// `org.bluez.GattManager1.RegisterApplication` and its advertisement with
/// `org.bluez.LEAdvertisingManager1.RegisterAdvertisement`, both on one adapter (`hci1`), so a central on
/// another controller sees a BLE peripheral over a real (or virtual) radio.
///
/// The device model is the same `SimulatedPeripheral` the D-Bus simulator hosts. bluetoothd calls ReadValue,
/// WriteValue, StartNotify and StopNotify on the exported objects; the device notifies by `PeripheralLink.notify`,
/// which sets `Value` (a PropertiesChanged that bluetoothd turns into a notification or indication). The
/// behaviour runs while a central is connected: this server watches `Device1.Connected` below the adapter.
///
/// It does not do: several devices on one adapter (one advertisement and GATT table per controller), pairing,
/// `AcquireWrite`/`AcquireNotify` on the server side, indication confirmations (`Confirm`), long (offset)
/// writes, or device events (`handle(_:link:)`).
public actor GattPeripheralServer {
    public static let applicationRoot: ObjectPath = "/org/wear2mqtt/app"
    public static let advertisementPath: ObjectPath = "/org/wear2mqtt/advertisement0"

    static let characteristicInterface = "org.bluez.GattCharacteristic1"

    private let connection: BusConnection
    private let peripheral: any SimulatedPeripheral
    private let adapterPath: ObjectPath
    private let layout: GattApplicationLayout
    private let logger: Logger
    private var notifying: Set<BluetoothUUID> = []
    private var behaviours: [ObjectPath: Task<Void, Never>] = [:]
    private var watcher: Task<Void, Never>?
    private var objectWatchers: [Task<Void, Never>] = []
    private(set) var mtu = 23

    /// Ends when the bus connection does (bluetoothd's bus going away).
    public nonisolated var disconnection: AsyncStream<Void> { connection.disconnection }

    private init(connection: BusConnection, peripheral: any SimulatedPeripheral, adapter: String, logger: Logger) {
        self.connection = connection
        self.peripheral = peripheral
        self.adapterPath = ObjectPath("/org/bluez").appending(adapter)
        self.layout = GattApplicationLayout(root: Self.applicationRoot, services: peripheral.services)
        self.logger = logger
    }

    /// Exports the application and the advertisement, powers the adapter, names it after the device (the GAP
    /// Device Name a central reads is the adapter's alias) and registers both. Throws what bluetoothd answers.
    public static func start(_ peripheral: any SimulatedPeripheral, adapter: String, on bus: BusAddress,
                             name: String? = nil, logger: Logger) async throws(BusError) -> GattPeripheralServer {
        let connection = try BusConnection(bus, logger: logger)
        let server = GattPeripheralServer(connection: connection, peripheral: peripheral, adapter: adapter, logger: logger)
        do {
            try await server.register(name: name)
        } catch {
            connection.close()
            throw error
        }
        return server
    }

    private func register(name: String?) async throws(BusError) {
        try await setAdapterProperty("Powered", .boolean(true))
        try await setAdapterProperty("Alias", .string(name ?? peripheral.deviceName))
        exportApplication()
        connection.objects.export(Self.advertisementPath, interfaces: [(
            InterfaceDefinition("org.bluez.LEAdvertisement1",
                                methods: [MethodDefinition("Release") { [logger] _ in
                                    logger.info("bluetoothd released the advertisement")
                                    return []
                                }],
                                properties: [("Type", "s"), ("ServiceUUIDs", "as"), ("LocalName", "s"), ("Discoverable", "b"),
                                             ("Appearance", "q"), ("ManufacturerData", "a{qv}"), ("ServiceData", "a{sv}")]
                                    .map { PropertyDefinition($0.0, signature: $0.1) }),
            PeripheralAdvertisement.properties(peripheral.advertisement, name: name))])
        let links = try await connection.signals(MatchRule(sender: "org.bluez", pathNamespace: adapterPath,
                                                           interface: "org.freedesktop.DBus.Properties",
                                                           member: "PropertiesChanged", arg0: "org.bluez.Device1"))
        watcher = Task { [weak self] in
            for await signal in links {
                guard let self, let path = signal.path,
                      let connected = signal.body.dropFirst().first?.stringKeyedDictionary?["Connected"]?.boolValue else { continue }
                await self.linkChanged(path, connected: connected)
            }
        }
        // A central bluetoothd did not know before appears with Connected=true already set (InterfacesAdded, no
        // PropertiesChanged); a temporary one can vanish (InterfacesRemoved) without Connected=false.
        let added = try await connection.signals(MatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.ObjectManager",
                                                           member: "InterfacesAdded"))
        let removed = try await connection.signals(MatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.ObjectManager",
                                                             member: "InterfacesRemoved"))
        let prefix = "\(adapterPath)/"
        objectWatchers = [
            Task { [weak self] in
                for await signal in added {
                    guard let self, let path = signal.body.first?.objectPathValue, "\(path)".hasPrefix(prefix),
                          let device = signal.body.dropFirst().first?.stringKeyedDictionary?["org.bluez.Device1"],
                          device.stringKeyedDictionary?["Connected"]?.boolValue == true else { continue }
                    await self.linkChanged(path, connected: true)
                }
            },
            Task { [weak self] in
                for await signal in removed {
                    guard let self, let path = signal.body.first?.objectPathValue, "\(path)".hasPrefix(prefix),
                          signal.body.dropFirst().first?.stringArrayValue?.contains("org.bluez.Device1") == true else { continue }
                    await self.linkChanged(path, connected: false)
                }
            },
        ]
        try await connection.call(destination: "org.bluez", path: adapterPath, interface: "org.bluez.GattManager1",
                                  member: "RegisterApplication",
                                  arguments: [.objectPath(Self.applicationRoot), .stringVariantDictionary([:])])
        try await connection.call(destination: "org.bluez", path: adapterPath, interface: "org.bluez.LEAdvertisingManager1",
                                  member: "RegisterAdvertisement",
                                  arguments: [.objectPath(Self.advertisementPath), .stringVariantDictionary([:])])
        logger.info("registered with bluetoothd", metadata: ["adapter": "\(adapterPath)",
                                                             "services": "\(layout.services.map(\.uuid.string))"])
    }

    private func setAdapterProperty(_ name: String, _ value: DBusValue) async throws(BusError) {
        try await connection.call(destination: "org.bluez", path: adapterPath, interface: "org.freedesktop.DBus.Properties",
                                  member: "Set", arguments: [.string("org.bluez.Adapter1"), .string(name), .variant(value)])
    }

    /// Unregisters (best effort: bluetoothd may be gone) and stops the behaviour.
    public func stop() async {
        watcher?.cancel()
        for task in objectWatchers { task.cancel() }
        for behaviour in behaviours.values { behaviour.cancel() }
        behaviours = [:]
        _ = try? await connection.call(destination: "org.bluez", path: adapterPath, interface: "org.bluez.LEAdvertisingManager1",
                                       member: "UnregisterAdvertisement", arguments: [.objectPath(Self.advertisementPath)],
                                       timeout: .seconds(2))
        _ = try? await connection.call(destination: "org.bluez", path: adapterPath, interface: "org.bluez.GattManager1",
                                       member: "UnregisterApplication", arguments: [.objectPath(Self.applicationRoot)],
                                       timeout: .seconds(2))
        connection.close()
    }

    // MARK: Links

    private func linkChanged(_ device: ObjectPath, connected: Bool) {
        if connected {
            guard behaviours[device] == nil else { return }
            logger.info("central connected", metadata: ["device": "\(device)"])
            let link = BlueZPeripheralLink(server: self, central: device)
            let peripheral = self.peripheral
            behaviours[device] = Task { await peripheral.run(on: link) }
        } else if let behaviour = behaviours.removeValue(forKey: device) {
            logger.info("central disconnected", metadata: ["device": "\(device)"])
            behaviour.cancel()
        }
    }

    func disconnect(_ central: ObjectPath) async {
        _ = try? await connection.call(destination: "org.bluez", path: central, interface: "org.bluez.Device1", member: "Disconnect")
    }

    func isSubscribed(_ characteristic: BluetoothUUID) -> Bool { notifying.contains(characteristic) }

    /// Sets `Value`, which bluetoothd sends as a notification or indication to the subscribed centrals.
    func push(_ characteristic: BluetoothUUID, value: [UInt8]) -> Bool {
        guard notifying.contains(characteristic), let entry = layout.characteristic(characteristic),
              let object = connection.objects.object(at: entry.path) else { return false }
        object.pushProperty("Value", .bytes(Array(value.prefix(mtu - 3))), interface: Self.characteristicInterface)
        return true
    }

    // MARK: The application's objects

    private func exportApplication() {
        let objects = connection.objects
        objects.addObjectManager(at: Self.applicationRoot)
        objects.export(Self.applicationRoot, interfaces: [])
        let service = InterfaceDefinition("org.bluez.GattService1", properties: [
            PropertyDefinition("UUID", signature: "s"), PropertyDefinition("Primary", signature: "b"),
            PropertyDefinition("Includes", signature: "ao"),
        ])
        for entry in layout.services {
            objects.export(entry.path, interfaces: [(service, GattApplicationLayout.serviceProperties(entry))])
            for characteristic in entry.characteristics {
                objects.export(characteristic.path, interfaces: [(characteristicInterface(characteristic),
                                                                  GattApplicationLayout.characteristicProperties(characteristic))])
                for descriptor in characteristic.descriptors {
                    objects.export(descriptor.path, interfaces: [(descriptorInterface(descriptor),
                                                                  GattApplicationLayout.descriptorProperties(descriptor))])
                }
            }
        }
    }

    private func characteristicInterface(_ characteristic: GattApplicationLayout.Characteristic) -> InterfaceDefinition {
        let uuid = characteristic.uuid
        var properties = [PropertyDefinition("UUID", signature: "s"), PropertyDefinition("Service", signature: "o"),
                          PropertyDefinition("Flags", signature: "as"), PropertyDefinition("Value", signature: "ay")]
        if !characteristic.flags.isDisjoint(with: [.notify, .indicate]) {
            properties.append(PropertyDefinition("Notifying", signature: "b"))
        }
        return InterfaceDefinition(Self.characteristicInterface, methods: [
            MethodDefinition("ReadValue", input: "a{sv}", output: "ay") { [weak self] call async throws(BusError) in
                guard let self else { throw .failed("stopped") }
                return [.bytes(try await self.read(uuid, options: call.arguments[0].stringKeyedDictionary ?? [:]))]
            },
            MethodDefinition("WriteValue", input: "aya{sv}") { [weak self] call async throws(BusError) in
                guard let self else { throw .failed("stopped") }
                try await self.write(uuid, value: call.arguments[0].bytesValue ?? [],
                                     options: call.arguments[1].stringKeyedDictionary ?? [:])
                return []
            },
            MethodDefinition("StartNotify") { [weak self] _ in
                await self?.setNotifying(uuid, true)
                return []
            },
            MethodDefinition("StopNotify") { [weak self] _ in
                await self?.setNotifying(uuid, false)
                return []
            },
        ], properties: properties)
    }

    private func descriptorInterface(_ descriptor: GattApplicationLayout.Descriptor) -> InterfaceDefinition {
        let path = descriptor.path
        let writable = descriptor.flags.contains(.write)
        return InterfaceDefinition("org.bluez.GattDescriptor1", methods: [
            MethodDefinition("ReadValue", input: "a{sv}", output: "ay") { [objects = connection.objects] call throws(BusError) in
                let value = objects.object(at: path)?.property("Value", interface: "org.bluez.GattDescriptor1")?.bytesValue ?? []
                let offset = Int(call.arguments[0].stringKeyedDictionary?["offset"]?.integerValue ?? 0)
                guard offset <= value.count else { throw ATTErrorReply.busError(for: .invalidOffset) }
                return [.bytes(Array(value[offset...]))]
            },
            MethodDefinition("WriteValue", input: "aya{sv}") { [objects = connection.objects] call throws(BusError) in
                guard writable else { throw ATTErrorReply.busError(for: .writeNotPermitted) }
                objects.object(at: path)?.setProperty("Value", .bytes(call.arguments[0].bytesValue ?? []),
                                                      interface: "org.bluez.GattDescriptor1")
                return []
            },
        ], properties: [PropertyDefinition("UUID", signature: "s"), PropertyDefinition("Characteristic", signature: "o"),
                        PropertyDefinition("Flags", signature: "as"), PropertyDefinition("Value", signature: "ay")])
    }

    // MARK: What bluetoothd asks

    private func noteMTU(_ options: [String: DBusValue]) {
        if let negotiated = options["mtu"]?.integerValue, negotiated >= 23 { mtu = Int(negotiated) }
    }

    private func read(_ uuid: BluetoothUUID, options: [String: DBusValue]) async throws(BusError) -> [UInt8] {
        noteMTU(options)
        let value: [UInt8]
        do {
            value = try await peripheral.read(uuid)
        } catch {
            throw ATTErrorReply.busError(for: error)
        }
        let offset = Int(options["offset"]?.integerValue ?? 0)
        guard offset <= value.count else { throw ATTErrorReply.busError(for: .invalidOffset) }
        return Array(value[offset...])
    }

    private func write(_ uuid: BluetoothUUID, value: [UInt8], options: [String: DBusValue]) async throws(BusError) {
        noteMTU(options)
        let kind: WriteKind = options["type"]?.stringValue == "command" ? .command : .request
        // One line per write, so a test can check what reached the device over the air.
        logger.info("received write \(uuid) [\(value.map { String($0, radix: 16).leftPadded(to: 2) }.joined(separator: " "))]",
                    metadata: ["type": "\(kind == .command ? "command" : "request")"])
        do {
            try await peripheral.write(uuid, value: value, kind: kind)
        } catch {
            guard kind == .request else { return }
            throw ATTErrorReply.busError(for: error)
        }
    }

    private func setNotifying(_ uuid: BluetoothUUID, _ on: Bool) async {
        guard on ? notifying.insert(uuid).inserted : notifying.remove(uuid) != nil else { return }
        if let entry = layout.characteristic(uuid) {
            connection.objects.object(at: entry.path)?.setProperty("Notifying", .boolean(on), interface: Self.characteristicInterface)
        }
        logger.debug("notifications \(on ? "on" : "off")", metadata: ["characteristic": "\(uuid)"])
        await peripheral.subscriptionChanged(uuid, isSubscribed: on)
    }
}

/// The link to one connected central as the device sees it; everything goes through the server.
struct BlueZPeripheralLink: PeripheralLink {
    let server: GattPeripheralServer
    let central: ObjectPath

    /// The minimum every central supports; the server still cuts what it sends at the negotiated MTU it learns
    /// from bluetoothd's read and write options.
    var mtu: Int { 23 }

    func isSubscribed(_ characteristic: BluetoothUUID) async -> Bool { await server.isSubscribed(characteristic) }

    func notify(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool { await server.push(characteristic, value: value) }

    /// Returns when bluetoothd has the value; the central's confirmation is not awaited (`Confirm` is not
    /// exported).
    func indicate(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool { await server.push(characteristic, value: value) }

    func disconnect() async { await server.disconnect(central) }
}

private extension String {
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
