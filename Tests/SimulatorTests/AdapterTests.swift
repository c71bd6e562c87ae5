import DBus
import Simulator
import Testing
import Wear2MQTTTesting

/// The object tree and discovery, as a BlueZ client sees them over a private bus.
@Suite(.timeLimit(.minutes(2)))
struct AdapterTests {
    @Test func theTreeHasWhatBlueZExportsAtStartAndNothingElse() async throws {
        try await SimulatorHarness.with { harness in
            let tree = try await harness.managedObjects()
            #expect(Set(tree.keys) == ["/org/bluez", "/org/bluez/hci0"])
            #expect(tree["/org/bluez"]?["org.bluez.AgentManager1"] != nil)
            let adapter = try #require(tree["/org/bluez/hci0"]?["org.bluez.Adapter1"])
            #expect(adapter["Address"] == "00:1A:7D:DA:71:13")
            #expect(adapter["Powered"] == true)
            #expect(adapter["Discovering"] == false)
            #expect(adapter["Roles"]?.stringArrayValue == ["central", "peripheral"])
            #expect(adapter["Modalias"] == "usb:v1D6Bp0246d0542")
            let filters = try await harness.call(SimulatorHarness.adapter, "org.bluez.Adapter1", "GetDiscoveryFilters")
            #expect(filters.first?.stringArrayValue == ["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"])
            let xml = try await harness.call(SimulatorHarness.adapter, "org.freedesktop.DBus.Introspectable", "Introspect")
            #expect(xml.first?.stringValue?.contains("<method name=\"SetDiscoveryFilter\"><arg type=\"a{sv}\" direction=\"in\"/></method>") == true)
            // The control interface lives on its own connection: not in org.bluez's tree.
            let controlOwner = try await harness.client.nameOwner("org.wear2mqtt.Simulator")
            let bluezOwner = try await harness.client.nameOwner("org.bluez")
            #expect(controlOwner != nil && controlOwner != bluezOwner)
        }
    }

    @Test func discoveryWithAUUIDFilterReportsOnlyMatchingDevicesWithRSSI() async throws {
        try await SimulatorHarness.with { harness in
            let adapter = SimulatorHarness.adapter
            try await harness.call(adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [.stringVariantDictionary([
                "UUIDs": .strings(["0000180d-0000-1000-8000-00805f9b34fb"]), "Transport": "le",
            ])])
            let started = harness.signals.mark
            try await harness.call(adapter, "org.bluez.Adapter1", "StartDiscovery")
            let strapPath = SimulatorHarness.devicePath(SimulatorHarness.strap)
            let added = try await harness.signals.next { $0.isInterfacesAdded(at: strapPath) }
            let properties = try #require(added.body[1].stringKeyedDictionary?["org.bluez.Device1"]?.stringKeyedDictionary)
            #expect(properties["Address"] == .string(SimulatorHarness.strap))
            #expect(properties["Name"] == "HRM-Sim")
            #expect(properties["Alias"] == "HRM-Sim")
            #expect(properties["Paired"] == false)
            #expect(properties["Connected"] == false)
            #expect(properties["Adapter"] == .objectPath(adapter))
            #expect(properties["UUIDs"]?.stringArrayValue == ["0000180d-0000-1000-8000-00805f9b34fb"])
            let rssi = try #require(properties["RSSI"]?.integerValue)
            #expect((-60 ... -50).contains(rssi))
            #expect(try await harness.property(adapter, "org.bluez.Adapter1", "Discovering") == true)
            // Under a filter, every advertisement updates RSSI.
            _ = try await harness.signals.next { $0.changes(strapPath, "org.bluez.Device1")?["RSSI"] != nil }
            // A second StartDiscovery from the same client is refused as BlueZ refuses it.
            await #expect(throws: BusError.remote(name: "org.bluez.Error.InProgress", message: "Operation already in progress")) {
                try await harness.call(adapter, "org.bluez.Adapter1", "StartDiscovery")
            }
            // Four more advertisements of the strap (every one signals RSSI under the filter, at least 90 ms apart):
            // every device, all advertising every 100 ms and first within 100 ms of the start, has advertised since.
            #expect(await harness.signals.until {
                harness.signals.all.dropFirst(started).filter { $0.changes(strapPath, "org.bluez.Device1")?["RSSI"] != nil }.count >= 4
            })
            let devices = try await harness.managedObjects().keys.filter { $0.rawValue.contains("dev_") }
            #expect(devices == [strapPath], "the thermometer, oximeter and tag do not advertise Heart Rate")
            let mark = harness.signals.mark
            try await harness.call(adapter, "org.bluez.Adapter1", "StopDiscovery")
            let invalidated = try await harness.signals.next(after: mark) {
                $0.path == strapPath && $0.member == "PropertiesChanged" && $0.body[2].stringArrayValue == ["RSSI", "TxPower"]
            }
            #expect(invalidated.body[1].stringKeyedDictionary?.isEmpty == true)
            #expect(try await harness.property(adapter, "org.bluez.Adapter1", "Discovering") == false)
            await #expect(throws: BusError.remote(name: "org.bluez.Error.Failed", message: "No discovery started")) {
                try await harness.call(adapter, "org.bluez.Adapter1", "StopDiscovery")
            }
        }
    }

    @Test func anInvalidFilterIsInvalidArgumentsAndPoweredOffIsNotReady() async throws {
        try await SimulatorHarness.with { harness in
            let adapter = SimulatorHarness.adapter
            await #expect(throws: BusError.remote(name: "org.bluez.Error.InvalidArguments", message: "Invalid arguments in method call")) {
                try await harness.call(adapter, "org.bluez.Adapter1", "SetDiscoveryFilter",
                                       [.stringVariantDictionary(["Transport": "carrier-pigeon"])])
            }
            try await harness.setProperty(adapter, "org.bluez.Adapter1", "Powered", false)
            _ = try await harness.signals.next { $0.changes(adapter, "org.bluez.Adapter1")?["Powered"] == false }
            await #expect(throws: BusError.remote(name: "org.bluez.Error.NotReady", message: "Resource Not Ready")) {
                try await harness.call(adapter, "org.bluez.Adapter1", "StartDiscovery")
            }
        }
    }

    @Test func aDeviceThatStopsAdvertisingIsForgottenAfterTheTemporaryTimeout() async throws {
        try await SimulatorHarness.with(SimulatorHarness.scenario(adapterExtra: "temporary_timeout: 500ms")) { harness in
            let tagPath = SimulatorHarness.devicePath(SimulatorHarness.tag)
            try await harness.call(SimulatorHarness.adapter, "org.bluez.Adapter1", "StartDiscovery")
            _ = try await harness.signals.next { $0.isInterfacesAdded(at: tagPath) }
            try await harness.control.setAdvertising(SimulatorHarness.tag, false)
            let removed = try await harness.signals.next(within: .seconds(3)) { $0.isInterfacesRemoved(at: tagPath) }
            #expect(removed.body[1].stringArrayValue == ["org.bluez.Device1"])
        }
    }
}
