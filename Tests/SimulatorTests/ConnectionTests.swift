import DBus
import Simulator
import Testing
import Wear2MQTTTesting

/// Connect, services resolution, Disconnect and links that drop, in the order BlueZ signals them.
@Suite(.timeLimit(.minutes(2)))
struct ConnectionTests {
    static let strapPath = SimulatorHarness.devicePath(SimulatorHarness.strap)

    @Test func connectSignalsConnectedThenAnswersThenExportsGATTObjectsThenServicesResolved() async throws {
        try await SimulatorHarness.with { harness in
            let path = Self.strapPath
            try await harness.discover(SimulatorHarness.strap)
            let mark = harness.signals.mark
            try await harness.call(path, "org.bluez.Device1", "Connect")
            let connected = await harness.signals.first(from: mark) { $0.changes(path, "org.bluez.Device1")?["Connected"] == true }
            let resolved = await harness.signals.first(from: mark) { $0.changes(path, "org.bluez.Device1")?["ServicesResolved"] == true }
            #expect(connected != nil && connected!.index < (resolved?.index ?? 0), "Connected comes before ServicesResolved")
            let firstGATT = try #require(await harness.signals.first(from: mark) { $0.isInterfacesAdded(at: path.appending("service0008")) })
            #expect(firstGATT.index < (resolved?.index ?? 0), "GATT objects exist before ServicesResolved")

            let tree = try await harness.managedObjects()
            let service = try #require(tree[path.appending("service000c")]?["org.bluez.GattService1"])
            #expect(service["UUID"] == "0000180d-0000-1000-8000-00805f9b34fb")
            #expect(service["Primary"] == true)
            #expect(service["Device"] == .objectPath(path))
            let measurement = try #require(tree[path.appending("service000c/char000d")]?["org.bluez.GattCharacteristic1"])
            #expect(measurement["UUID"] == "00002a37-0000-1000-8000-00805f9b34fb")
            #expect(measurement["Flags"]?.stringArrayValue == ["notify"])
            #expect(measurement["Notifying"] == false)
            #expect(measurement["NotifyAcquired"] == false)
            #expect(measurement["WriteAcquired"] == nil, "only for write-without-response characteristics")
            #expect(measurement["MTU"] == .uint16(247))
            #expect(measurement["Value"] == .bytes([]))
            let cccd = try #require(tree[path.appending("service000c/char000d/desc000f")]?["org.bluez.GattDescriptor1"])
            #expect(cccd["UUID"] == "00002902-0000-1000-8000-00805f9b34fb")
            #expect(tree[path.appending("service0001")] == nil, "GAP is claimed by BlueZ and not exported")
            #expect(tree[path.appending("service0008/char0009")]?["org.bluez.GattCharacteristic1"]?["UUID"]
                == "00002a05-0000-1000-8000-00805f9b34fb")
            let device = try #require(tree[path]?["org.bluez.Device1"])
            #expect(device["Connected"] == true)
            #expect(device["ServicesResolved"] == true)
            #expect(device["UUIDs"]?.stringArrayValue?.contains("0000180f-0000-1000-8000-00805f9b34fb") == true)
            #expect(device["UUIDs"]?.stringArrayValue?.first == "00001800-0000-1000-8000-00805f9b34fb")
            // BlueZ's battery plugin exports Battery1 once it has read the level.
            _ = try await harness.signals.next { $0.isInterfacesAdded(at: path) && $0.body[1].stringKeyedDictionary?["org.bluez.Battery1"] != nil }
            #expect(try await harness.property(path, "org.bluez.Battery1", "Percentage") == .byte(77))
            // Connect on a connected device succeeds at once.
            try await harness.call(path, "org.bluez.Device1", "Connect")
        }
    }

    @Test func disconnectDropsTheLinkAfterTheTimerAndKeepsCachedObjects() async throws {
        try await SimulatorHarness.with { harness in
            let path = Self.strapPath
            try await harness.connect(SimulatorHarness.strap)
            _ = try await harness.signals.next { $0.isInterfacesAdded(at: path) && $0.body[1].stringKeyedDictionary?["org.bluez.Battery1"] != nil }
            let mark = harness.signals.mark
            let started = ContinuousClock.now
            try await harness.call(path, "org.bluez.Device1", "Disconnect")
            #expect(ContinuousClock.now - started >= .milliseconds(100), "the link goes when the disconnect timer fires")
            #expect(try await harness.property(path, "org.bluez.Device1", "Connected") == false)
            _ = try await harness.signals.next(after: mark) { $0.changes(path, "org.bluez.Device1")?["ServicesResolved"] == false }
            _ = try await harness.signals.next(after: mark) { $0.isInterfacesRemoved(at: path) && $0.body[1].stringArrayValue == ["org.bluez.Battery1"] }
            // GATT cache "always" (BlueZ's default): the objects stay; GATT calls say Not connected.
            #expect(try await harness.managedObjects()[path.appending("service000c/char000d")] != nil)
            await #expect(throws: BusError.remote(name: "org.bluez.Error.Failed", message: "Not connected")) {
                try await harness.call(path.appending("service0014/char0015"), "org.bluez.GattCharacteristic1", "ReadValue",
                                       [.stringVariantDictionary([:])])
            }
            // Disconnect on a disconnected device succeeds.
            try await harness.call(path, "org.bluez.Device1", "Disconnect")
        }
    }

    @Test func aDroppedLinkRemovesGATTObjectsWithoutCacheAndClosesTheNotifySocket() async throws {
        try await SimulatorHarness.with(SimulatorHarness.scenario(gattCache: "no")) { harness in
            let path = Self.strapPath
            try await harness.connect(SimulatorHarness.strap)
            let reply = try await harness.call(path.appending("service000c/char000d"), "org.bluez.GattCharacteristic1", "AcquireNotify",
                                               [.stringVariantDictionary([:])])
            let fd = try #require(reply.first?.unixFDValue)
            #expect(try await readDatagram(fd, within: .seconds(2)) != nil, "notifications flow")
            let mark = harness.signals.mark
            try await harness.control.dropLink(SimulatorHarness.strap)
            _ = try await harness.signals.next(after: mark) { $0.changes(path, "org.bluez.Device1")?["Connected"] == false }
            let signals = harness.signals.all[mark...]
            let removedGATT = signals.filter { $0.member == "InterfacesRemoved" && ($0.body.first?.objectPathValue?.rawValue.contains("/service") ?? false) }
            #expect(removedGATT.first?.body.first?.objectPathValue == path.appending("service0008/char0009/desc000b"),
                    "descriptors go before their characteristic, characteristics before their service")
            #expect(removedGATT.contains { $0.isInterfacesRemoved(at: path.appending("service000c")) })
            let resolvedIndex = signals.firstIndex { $0.changes(path, "org.bluez.Device1")?["ServicesResolved"] == false }
            let connectedIndex = signals.firstIndex { $0.changes(path, "org.bluez.Device1")?["Connected"] == false }
            #expect(resolvedIndex != nil && resolvedIndex! < connectedIndex!)
            #expect(try await harness.managedObjects().keys.filter { $0.isDescendant(of: path) } == [path])
            // The socket was hung up: reading drains to end of file.
            #expect(await socketClosed(fd, within: .seconds(2)))
        }
    }

    @Test func poweringTheAdapterOffDropsLinksAndDiscoveryAndConnectIsNotReady() async throws {
        try await SimulatorHarness.with { harness in
            let path = Self.strapPath
            try await harness.connect(SimulatorHarness.strap)
            try await harness.call(SimulatorHarness.adapter, "org.bluez.Adapter1", "StartDiscovery")
            let mark = harness.signals.mark
            try await harness.control.setPowered(false)
            _ = try await harness.signals.next(after: mark) { $0.changes(path, "org.bluez.Device1")?["Connected"] == false }
            _ = try await harness.signals.next(after: mark) { $0.changes(SimulatorHarness.adapter, "org.bluez.Adapter1")?["Discovering"] == false }
            _ = try await harness.signals.next(after: mark) { $0.changes(SimulatorHarness.adapter, "org.bluez.Adapter1")?["Powered"] == false }
            await #expect(throws: BusError.remote(name: "org.bluez.Error.NotReady", message: "Resource Not Ready")) {
                try await harness.call(path, "org.bluez.Device1", "Connect")
            }
            try await harness.control.setPowered(true)
            try await harness.call(path, "org.bluez.Device1", "Connect")
            #expect(try await harness.property(path, "org.bluez.Device1", "Connected") == true)
        }
    }
}
