import BlueZ
import DBus

/// The interfaces bluetoothd 5.66 exports, with the method signatures and property types of its gdbus tables
/// (`src/adapter.c`, `src/device.c`, `src/gatt-client.c`, `src/agent.c`, `src/battery.c`), each method routed
/// to the daemon. Properties are listed even when an object does not have them yet (RSSI before a device is
/// seen), so introspection and Set behave as in BlueZ; present values live in the object registry.
enum BlueZInterfaces {
    static let adapter = "org.bluez.Adapter1"
    static let device = "org.bluez.Device1"
    static let gattService = "org.bluez.GattService1"
    static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    static let gattDescriptor = "org.bluez.GattDescriptor1"
    static let agentManager = "org.bluez.AgentManager1"
    static let battery = "org.bluez.Battery1"
    static let agent = "org.bluez.Agent1"

    /// Runs a daemon operation and turns its BlueZ error into the D-Bus error reply.
    static func answer(_ body: () async throws(BlueZErrorReply) -> [DBusValue]) async throws(BusError) -> [DBusValue] {
        do {
            return try await body()
        } catch {
            throw error.busError
        }
    }

    static func adapterDefinition(_ daemon: SimulatedBluetoothDaemon) -> InterfaceDefinition {
        InterfaceDefinition(adapter, methods: [
            MethodDefinition("StartDiscovery") { call throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in try await daemon.startDiscovery(client: call.sender); return [] }
            },
            MethodDefinition("SetDiscoveryFilter", input: "a{sv}") { call throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in
                    try await daemon.setDiscoveryFilter(call.arguments[0].stringKeyedDictionary ?? [:], client: call.sender)
                    return []
                }
            },
            MethodDefinition("StopDiscovery") { call throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in try await daemon.stopDiscovery(client: call.sender); return [] }
            },
            MethodDefinition("RemoveDevice", input: "o") { call throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in
                    try await daemon.removeDevice(call.arguments[0].objectPathValue ?? "/")
                    return []
                }
            },
            MethodDefinition("GetDiscoveryFilters", output: "as") { _ throws(BusError) in
                [.strings(DiscoveryFilter.supportedKeys)]
            },
        ], properties: [
            PropertyDefinition("Address", signature: "s"),
            PropertyDefinition("AddressType", signature: "s"),
            PropertyDefinition("Name", signature: "s"),
            PropertyDefinition("Alias", signature: "s", access: .readwrite) { value throws(BusError) in
                await daemon.setAdapterAlias(value.stringValue ?? "")
            },
            PropertyDefinition("Class", signature: "u"),
            PropertyDefinition("Powered", signature: "b", access: .readwrite) { value throws(BusError) in
                await daemon.setPowered(value.boolValue ?? false)
            },
            PropertyDefinition("Discoverable", signature: "b", access: .readwrite) { value throws(BusError) in
                _ = try await answer { () throws(BlueZErrorReply) in try await daemon.setDiscoverable(value.boolValue ?? false); return [] }
            },
            PropertyDefinition("DiscoverableTimeout", signature: "u", access: .readwrite),
            PropertyDefinition("Pairable", signature: "b", access: .readwrite),
            PropertyDefinition("PairableTimeout", signature: "u", access: .readwrite),
            PropertyDefinition("Discovering", signature: "b"),
            PropertyDefinition("UUIDs", signature: "as"),
            PropertyDefinition("Modalias", signature: "s"),
            PropertyDefinition("Roles", signature: "as"),
        ])
    }

    static func deviceDefinition(_ daemon: SimulatedBluetoothDaemon, address: BluetoothAddress) -> InterfaceDefinition {
        InterfaceDefinition(device, methods: [
            MethodDefinition("Disconnect") { _ throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in try await daemon.disconnect(address); return [] }
            },
            MethodDefinition("Connect") { _ throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in try await daemon.connect(address); return [] }
            },
            MethodDefinition("Pair") { call throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in try await daemon.pair(address, client: call.sender); return [] }
            },
            MethodDefinition("CancelPairing") { _ throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in try await daemon.cancelPairing(address); return [] }
            },
        ], properties: [
            PropertyDefinition("Address", signature: "s"),
            PropertyDefinition("AddressType", signature: "s"),
            PropertyDefinition("Name", signature: "s"),
            PropertyDefinition("Alias", signature: "s", access: .readwrite) { value throws(BusError) in
                await daemon.setDeviceAlias(address, value.stringValue ?? "")
            },
            PropertyDefinition("Class", signature: "u"),
            PropertyDefinition("Appearance", signature: "q"),
            PropertyDefinition("Icon", signature: "s"),
            PropertyDefinition("Paired", signature: "b"),
            PropertyDefinition("Bonded", signature: "b"),
            PropertyDefinition("Trusted", signature: "b", access: .readwrite) { value throws(BusError) in
                await daemon.setTrusted(address, value.boolValue ?? false)
            },
            PropertyDefinition("Blocked", signature: "b", access: .readwrite) { value throws(BusError) in
                await daemon.setBlocked(address, value.boolValue ?? false)
            },
            PropertyDefinition("LegacyPairing", signature: "b"),
            PropertyDefinition("RSSI", signature: "n"),
            PropertyDefinition("Connected", signature: "b"),
            PropertyDefinition("UUIDs", signature: "as"),
            PropertyDefinition("Modalias", signature: "s"),
            PropertyDefinition("Adapter", signature: "o"),
            PropertyDefinition("ManufacturerData", signature: "a{qv}"),
            PropertyDefinition("ServiceData", signature: "a{sv}"),
            PropertyDefinition("TxPower", signature: "n"),
            PropertyDefinition("ServicesResolved", signature: "b"),
            PropertyDefinition("AdvertisingFlags", signature: "ay"),
        ])
    }

    static let serviceDefinition = InterfaceDefinition(gattService, properties: [
        PropertyDefinition("UUID", signature: "s"),
        PropertyDefinition("Device", signature: "o"),
        PropertyDefinition("Primary", signature: "b"),
        PropertyDefinition("Includes", signature: "ao"),
    ])

    static func characteristicDefinition(_ daemon: SimulatedBluetoothDaemon) -> InterfaceDefinition {
        InterfaceDefinition(gattCharacteristic, methods: [
            MethodDefinition("ReadValue", input: "a{sv}", output: "ay") { call throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in
                    [.bytes(try await daemon.readCharacteristic(call.path, options: call.arguments[0]))]
                }
            },
            MethodDefinition("WriteValue", input: "aya{sv}") { call throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in
                    try await daemon.writeCharacteristic(call.path, value: call.arguments[0].bytesValue ?? [],
                                                         options: call.arguments[1])
                    return []
                }
            },
            MethodDefinition("AcquireWrite", input: "a{sv}", output: "hq") { call throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in try await daemon.acquireWrite(call.path, client: call.sender) }
            },
            MethodDefinition("AcquireNotify", input: "a{sv}", output: "hq") { call throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in try await daemon.acquireNotify(call.path, client: call.sender) }
            },
            MethodDefinition("StartNotify") { call throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in try await daemon.startNotify(call.path, client: call.sender); return [] }
            },
            MethodDefinition("StopNotify") { call throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in try await daemon.stopNotify(call.path, client: call.sender); return [] }
            },
        ], properties: [
            PropertyDefinition("UUID", signature: "s"),
            PropertyDefinition("Service", signature: "o"),
            PropertyDefinition("Value", signature: "ay"),
            PropertyDefinition("Notifying", signature: "b"),
            PropertyDefinition("Flags", signature: "as"),
            PropertyDefinition("WriteAcquired", signature: "b"),
            PropertyDefinition("NotifyAcquired", signature: "b"),
            PropertyDefinition("MTU", signature: "q"),
        ])
    }

    static func descriptorDefinition(_ daemon: SimulatedBluetoothDaemon) -> InterfaceDefinition {
        InterfaceDefinition(gattDescriptor, methods: [
            MethodDefinition("ReadValue", input: "a{sv}", output: "ay") { call throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in
                    [.bytes(try await daemon.readDescriptor(call.path, options: call.arguments[0]))]
                }
            },
            MethodDefinition("WriteValue", input: "aya{sv}") { call throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in
                    try await daemon.writeDescriptor(call.path, value: call.arguments[0].bytesValue ?? [], options: call.arguments[1])
                    return []
                }
            },
        ], properties: [
            PropertyDefinition("UUID", signature: "s"),
            PropertyDefinition("Characteristic", signature: "o"),
            PropertyDefinition("Value", signature: "ay"),
        ])
    }

    static func agentManagerDefinition(_ daemon: SimulatedBluetoothDaemon) -> InterfaceDefinition {
        InterfaceDefinition(agentManager, methods: [
            MethodDefinition("RegisterAgent", input: "os") { call throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in
                    try await daemon.registerAgent(path: call.arguments[0].stringValue ?? "", capability: call.arguments[1].stringValue ?? "",
                                                   client: call.sender)
                    return []
                }
            },
            MethodDefinition("UnregisterAgent", input: "o") { call throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in
                    try await daemon.unregisterAgent(path: call.arguments[0].stringValue ?? "", client: call.sender)
                    return []
                }
            },
            MethodDefinition("RequestDefaultAgent", input: "o") { call throws(BusError) in
                try await answer { () throws(BlueZErrorReply) in
                    try await daemon.requestDefaultAgent(path: call.arguments[0].stringValue ?? "", client: call.sender)
                    return []
                }
            },
        ])
    }

    /// Percentage only: `Source` is experimental in 5.66 and hidden without `--experimental`.
    static let batteryDefinition = InterfaceDefinition(battery, properties: [PropertyDefinition("Percentage", signature: "y")])
}
