@testable import BlueZ
import DBus
import Testing

/// The model as pure value: the same signals always give the same model and events.
@Suite struct BlueZModelTests {
    let adapterPath: ObjectPath = "/org/bluez/hci0"
    let devicePath: ObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01"
    let servicePath: ObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service000c"
    let characteristicPath: ObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service000c/char000d"
    let heartRateService = "0000180d-0000-1000-8000-00805f9b34fb"
    let heartRateMeasurement = "00002a37-0000-1000-8000-00805f9b34fb"

    func managedObjects() -> DBusValue {
        func interfaces(_ values: [String: [String: DBusValue]]) -> DBusValue {
            .dictionary(keySignature: "s", valueSignature: "a{sv}",
                        values.map { .init(.string($0.key), .stringVariantDictionary($0.value)) })
        }
        return .dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", [
            .init(.objectPath(adapterPath), interfaces([BlueZNames.adapter: [
                "Address": "00:11:22:33:44:55", "Name": "gateway", "Powered": true, "Discovering": false]])),
            .init(.objectPath(devicePath), interfaces([BlueZNames.device: [
                "Address": "AA:BB:CC:DD:EE:01", "Name": "Strap", "Adapter": .objectPath(adapterPath), "RSSI": .int16(-58),
                "Connected": false, "ServicesResolved": false, "UUIDs": .strings(["0000180D-0000-1000-8000-00805F9B34FB"]),
                "ManufacturerData": .dictionary(keySignature: "q", valueSignature: "v", [.init(.uint16(0x0059), .variant(.bytes([1, 2])))]),
            ]])),
        ])
    }

    @Test func getManagedObjectsBuildsAdaptersAndDevices() throws {
        var model = BlueZModel()
        #expect(model.reset(managedObjects: managedObjects()) == [.reset])
        let adapter = try #require(model.adapters[adapterPath])
        #expect(adapter.address == BluetoothAddress("00:11:22:33:44:55"))
        #expect(adapter.id == "hci0")
        #expect(adapter.powered)
        let device = try #require(model.device(address: BluetoothAddress("aa:bb:cc:dd:ee:01")!))
        #expect(device.name == "Strap")
        #expect(device.rssi == -58)
        #expect(device.serviceUUIDs == [heartRateService])
        #expect(device.manufacturerData == [0x0059: [1, 2]])
    }

    @Test func propertiesChangedUpdatesTheDeviceAndNamesWhatChanged() throws {
        var model = BlueZModel()
        _ = model.reset(managedObjects: managedObjects())
        let events = model.propertiesChanged(path: devicePath, interface: BlueZNames.device,
                                             changed: ["Connected": true, "RSSI": .int16(-40)])
        guard case .deviceChanged(let device, let changed)? = events.first else {
            Issue.record("no deviceChanged event: \(events)")
            return
        }
        #expect(changed == ["Connected", "RSSI"])
        #expect(device.connected && device.rssi == -40 && device.name == "Strap")
        // An object the model does not know changes nothing.
        #expect(model.propertiesChanged(path: "/org/bluez/hci9", interface: BlueZNames.adapter, changed: ["Powered": false]).isEmpty)
    }

    @Test func resolvedServicesMeanConnectedEvenWithoutAConnectedSignal() throws {
        // Seen with real bluetoothd 5.66 (Tests/realbluez): ServicesResolved=true, Connected never signalled.
        var model = BlueZModel()
        _ = model.reset(managedObjects: managedObjects())
        _ = model.propertiesChanged(path: devicePath, interface: BlueZNames.device, changed: ["ServicesResolved": true])
        #expect(model.devices[devicePath]?.connected == true)
        _ = model.propertiesChanged(path: devicePath, interface: BlueZNames.device, changed: ["ServicesResolved": false])
        #expect(model.devices[devicePath]?.connected == false)
    }

    @Test func gattObjectsAreFoundByUUIDAndTheirValuesTakeTheFastPath() throws {
        var model = BlueZModel()
        _ = model.reset(managedObjects: managedObjects())
        _ = model.interfacesAdded(path: servicePath, interfaces: [BlueZNames.gattService: [
            "UUID": .string(heartRateService), "Primary": true, "Device": .objectPath(devicePath)]])
        let added = model.interfacesAdded(path: characteristicPath, interfaces: [BlueZNames.gattCharacteristic: [
            "UUID": .string(heartRateMeasurement), "Service": .objectPath(servicePath), "Flags": .strings(["notify"])]])
        #expect(added == [.gattChanged(device: devicePath)])
        let found = try #require(model.characteristic(device: devicePath, service: heartRateService, uuid: heartRateMeasurement.uppercased()))
        #expect(found.path == characteristicPath && found.canNotify)
        #expect(model.characteristic(device: devicePath, service: "0000180f-0000-1000-8000-00805f9b34fb", uuid: heartRateMeasurement) == nil)

        let value = model.propertiesChanged(path: characteristicPath, interface: BlueZNames.gattCharacteristic,
                                            changed: ["Value": .bytes([0x16, 0x48])])
        #expect(value == [.characteristicValue(characteristicPath, [0x16, 0x48])])

        let removed = model.interfacesRemoved(path: characteristicPath, interfaces: [BlueZNames.gattCharacteristic])
        #expect(removed == [.gattChanged(device: devicePath)])
        #expect(model.characteristic(device: devicePath, uuid: heartRateMeasurement) == nil)
    }

    @Test func aRemovedDeviceIsReportedWithWhatWasKnownOfIt() {
        var model = BlueZModel()
        _ = model.reset(managedObjects: managedObjects())
        let events = model.interfacesRemoved(path: devicePath, interfaces: [BlueZNames.device])
        guard case .deviceRemoved(let device)? = events.first else {
            Issue.record("no deviceRemoved: \(events)")
            return
        }
        #expect(device.address == BluetoothAddress("AA:BB:CC:DD:EE:01"))
        #expect(model.devices.isEmpty)
    }
}

@Suite struct BluetoothAddressTests {
    @Test func acceptsTheUsualSpellingsAndRejectsOthers() {
        #expect(BluetoothAddress("aa:bb:cc:dd:ee:ff")?.rawValue == "AA:BB:CC:DD:EE:FF")
        #expect(BluetoothAddress("AA-BB-CC-DD-EE-FF")?.rawValue == "AA:BB:CC:DD:EE:FF")
        #expect(BluetoothAddress("aabbccddeeff")?.pathElement == "dev_AA_BB_CC_DD_EE_FF")
        #expect(BluetoothAddress("AA:BB:CC:DD:EE:FF")?.compactLowercase == "aabbccddeeff")
        #expect(BluetoothAddress("AA:BB:CC:DD:EE") == nil)
        #expect(BluetoothAddress("GG:BB:CC:DD:EE:FF") == nil)
        #expect(AdapterSelector("hci1") == .name("hci1"))
        #expect(AdapterSelector("00:11:22:33:44:55") == .address(BluetoothAddress("00:11:22:33:44:55")!))
    }

    /// The simulator reads addresses as bluetoothd does: colons only, six pairs.
    @Test func colonSeparatedAcceptsOnlyBlueZsSpelling() {
        #expect(BluetoothAddress.colonSeparated("aa:bb:cc:dd:ee:0f")?.rawValue == "AA:BB:CC:DD:EE:0F")
        #expect(BluetoothAddress.colonSeparated("aa:bb:cc:dd:ee:0f") == BluetoothAddress("aabbccddee0f"))
        for text in ["AA-BB-CC-DD-EE-FF", "AABBCCDDEEFF", "AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:FF:00", "A:BB:CC:DD:EE:FFF",
                     "AA:BB:CC:DD:EE:", "GG:BB:CC:DD:EE:FF", "+F:BB:CC:DD:EE:FF", "AA:BB:CC:DD:EE:FF "] {
            #expect(BluetoothAddress.colonSeparated(text) == nil, "\(text)")
        }
    }

    @Test func formatsAsBlueZAndOrdersByBytes() throws {
        let address = try #require(BluetoothAddress("c0:ff:ee:00:00:fe"))
        #expect(address.description == "C0:FF:EE:00:00:FE")
        #expect(address.bytes == [0xC0, 0xFF, 0xEE, 0x00, 0x00, 0xFE])
        #expect(address.dashed == "C0-FF-EE-00-00-FE")
        #expect(address.pathElement == "dev_C0_FF_EE_00_00_FE")
        #expect(address.addingToLastByte(1).description == "C0:FF:EE:00:00:FF")
        #expect(address.addingToLastByte(3).description == "C0:FF:EE:00:00:01", "wraps without carry")
        let sorted = ["0A:00:00:00:00:00", "09:FF:FF:FF:FF:FF", "A0:00:00:00:00:00"].compactMap(BluetoothAddress.init).sorted()
        #expect(sorted.map(\.description) == ["09:FF:FF:FF:FF:FF", "0A:00:00:00:00:00", "A0:00:00:00:00:00"])
    }
}

@Suite struct BlueZErrorTests {
    @Test func dbusErrorsAreSortedByWhatTheCallerShouldDo() {
        #expect(BlueZError(.remote(name: "org.bluez.Error.InProgress", message: "busy")) == .inProgress("busy"))
        #expect(BlueZError(.remote(name: "org.bluez.Error.InProgress", message: "busy")).isRetryable)
        #expect(BlueZError(.remote(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")).isRetryable)
        #expect(BlueZError(.remote(name: "org.bluez.Error.AuthenticationFailed", message: "")) == .authenticationFailed("org.bluez.Error.AuthenticationFailed"))
        #expect(!BlueZError(.remote(name: "org.bluez.Error.NotPermitted", message: "x")).isRetryable)
        #expect(BlueZError(.remote(name: "org.freedesktop.DBus.Error.ServiceUnknown", message: "")) == .serviceUnavailable)
        #expect(BlueZError(.timeout(member: "Connect")) == .timeout("Connect"))
    }

    @Test func retryingStopsAtTheFirstSuccessAndGivesUpOnFinalErrors() async throws {
        var calls = 0
        let value = try await retryingBlueZ(initialDelay: .milliseconds(1)) { () throws(BlueZError) -> Int in
            calls += 1
            if calls < 3 { throw .inProgress("busy") }
            return 42
        }
        #expect(value == 42 && calls == 3)
        calls = 0
        await #expect(throws: BlueZError.notConnected) {
            try await retryingBlueZ(initialDelay: .milliseconds(1)) { () throws(BlueZError) -> Int in
                calls += 1
                throw .notConnected
            }
        }
        #expect(calls == 1)
    }
}
