import DBus
@testable import Simulator
import Testing
import Wear2MQTTTesting

/// The radio faults as a pure state machine: what clears what, and what is refused.
struct RadioFaultsStateTests {
    @Test func aRestartClearsOnlyTheRestartDeafnessAndPowerOffClearsEverything() throws {
        var faults = RadioFaults()
        try faults.deafenScanner(clearedBy: .restart)
        #expect(!faults.hearsAdvertisements)
        faults.scannerStopped()
        #expect(faults.hearsAdvertisements)

        try faults.deafenScanner(clearedBy: .power)
        try faults.stickDiscovery()
        faults.scannerStopped()
        #expect(!faults.hearsAdvertisements && faults.discoveryStuck, "a restart does not cure a power fault")
        faults.poweredOff()
        #expect(faults == RadioFaults())
    }

    @Test func aRemovedAdapterRefusesFaultsAndASecondRemovalAndComesBackWithoutItsFaults() throws {
        var faults = RadioFaults()
        #expect(throws: RadioFaults.Refusal.adapterPresent) { try faults.restoreAdapter() }
        try faults.deafenScanner(clearedBy: .power)
        try faults.removeAdapter()
        #expect(faults.summary == ["adapter": "removed", "scanner_deaf": "no", "discovery_stuck": "no"])
        #expect(throws: RadioFaults.Refusal.adapterRemoved) { try faults.removeAdapter() }
        #expect(throws: RadioFaults.Refusal.adapterRemoved) { try faults.deafenScanner(clearedBy: .restart) }
        #expect(throws: RadioFaults.Refusal.adapterRemoved) { try faults.stickDiscovery() }
        try faults.restoreAdapter()
        #expect(faults == RadioFaults())
    }
}

/// The radio faults a gateway's radio watchdog must notice and cure, as a BlueZ client sees them on the bus, and the
/// cure each documents (docs/simulator.md, "Radio faults").
///
/// Every device advertises every 100 ms and discovery runs under a filter, so every advertisement heard signals RSSI:
/// "nothing arrives" is checked over at least 30 advertisements the deaf scanner let go unreported (about ten intervals of
/// each of the three devices), counted by the simulator rather than timed.
@Suite(.timeLimit(.minutes(2)))
struct RadioFaultTests {
    static let adapter = SimulatorHarness.adapter
    static let strapPath = SimulatorHarness.devicePath(SimulatorHarness.strap)
    static let thermometerPath = SimulatorHarness.devicePath(SimulatorHarness.thermometer)
    static let tagPath = SimulatorHarness.devicePath(SimulatorHarness.tag)
    /// Ten advertising intervals of each of the scenarios' devices, counted as the simulator sends them.
    static let silentAdvertisements = 30

    /// What an advertisement heard makes BlueZ signal: a new device, or a changed RSSI, name or advertising data.
    static func isAdvertisingReport(_ signal: BusSignal) -> Bool {
        if signal.member == "InterfacesAdded", let path = signal.body.first?.objectPathValue, path != adapter, path.isDescendant(of: adapter) {
            return true
        }
        guard signal.member == "PropertiesChanged", let path = signal.path, path.isDescendant(of: adapter),
              let changes = signal.changes(path, "org.bluez.Device1") else { return false }
        return !Set(changes.keys).isDisjoint(with: ["RSSI", "Name", "ManufacturerData", "ServiceData", "TxPower"])
    }

    /// A Get over the `org.bluez` connection: its reply comes after every signal the simulator sent before answering
    /// it, so a mark taken afterwards excludes reports from before a fault (the control call's reply comes over
    /// another connection, which the bus does not order with this one).
    static func discovering(_ harness: SimulatorHarness) async throws -> Bool {
        try await harness.property(adapter, "org.bluez.Adapter1", "Discovering")?.boolValue ?? false
    }

    /// The adapter's faults and counts (`Inspect` with no address).
    static func inspectAdapter(_ harness: SimulatorHarness) async throws -> [String: String] {
        try await harness.control.inspect("")
    }

    /// Waits until the deaf scanner has let `silentAdvertisements` more advertisements go unreported, then returns the
    /// advertising reports recorded after `mark` (expected: none). Counted, not timed: a loaded machine cannot make
    /// the window hold fewer advertisements than it should.
    static func reportsDuringSilentWindow(after mark: Int, _ harness: SimulatorHarness) async throws -> [BusSignal] {
        func unheard() async -> Int { Int(await harness.simulator.inspectAdapter()["unheard_advertisements"] ?? "") ?? 0 }
        let start = await unheard()
        let counted = await eventually(timeout: .seconds(20)) { await unheard() >= start + silentAdvertisements }
        #expect(counted, "the deaf scanner let fewer than \(silentAdvertisements) advertisements go by in 20 s")
        return harness.signals.all.dropFirst(mark).filter(isAdvertisingReport)
    }

    static func startFilteredDiscovery(_ harness: SimulatorHarness) async throws {
        try await harness.call(adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [.stringVariantDictionary(["Transport": "le"])])
        try await harness.call(adapter, "org.bluez.Adapter1", "StartDiscovery")
    }

    /// Powered false then true over Properties.Set, as the watchdog's second step does, waiting for each signal.
    static func powerCycle(_ harness: SimulatorHarness) async throws {
        let mark = harness.signals.mark
        try await harness.setProperty(adapter, "org.bluez.Adapter1", "Powered", false)
        _ = try await harness.signals.next(after: mark) { $0.changes(adapter, "org.bluez.Adapter1")?["Powered"] == false }
        try await harness.setProperty(adapter, "org.bluez.Adapter1", "Powered", true)
        _ = try await harness.signals.next(after: mark) { $0.changes(adapter, "org.bluez.Adapter1")?["Powered"] == true }
    }

    @Test func aDeafScannerKeepsDiscoveringButReportsNothingUntilDiscoveryIsRestarted() async throws {
        try await SimulatorHarness.with { harness in
            try await harness.control.setAdvertising(SimulatorHarness.tag, false)
            try await Self.startFilteredDiscovery(harness)
            _ = try await harness.signals.next { $0.changes(Self.strapPath, "org.bluez.Device1")?["RSSI"] != nil }

            try await harness.control.deafenScanner(clearedBy: .restart)
            #expect(try await Self.discovering(harness))
            let deaf = harness.signals.mark
            // The tag starts advertising: a scanner that hears would add it within 100 ms.
            try await harness.control.setAdvertising(SimulatorHarness.tag, true)
            #expect(try await Self.reportsDuringSilentWindow(after: deaf, harness).isEmpty)
            #expect(try await Self.discovering(harness), "Discovering stays true")
            #expect(!harness.signals.all.dropFirst(deaf).contains { $0.changes(Self.adapter, "org.bluez.Adapter1") != nil })
            #expect(try await Self.inspectAdapter(harness)["scanner_deaf"] == "restart")

            let restarted = harness.signals.mark
            try await harness.call(Self.adapter, "org.bluez.Adapter1", "StopDiscovery")
            try await harness.call(Self.adapter, "org.bluez.Adapter1", "StartDiscovery")
            _ = try await harness.signals.next(after: restarted) { $0.isInterfacesAdded(at: Self.tagPath) }
            _ = try await harness.signals.next(after: restarted) { $0.changes(Self.strapPath, "org.bluez.Device1")?["RSSI"] != nil }
            #expect(try await Self.inspectAdapter(harness)["scanner_deaf"] == "no")
        }
    }

    @Test func aScannerDeafUntilAPowerCycleStaysDeafAcrossARestartAndHearsAfterOne() async throws {
        try await SimulatorHarness.with { harness in
            try await harness.control.deafenScanner(clearedBy: .power)
            let deaf = harness.signals.mark
            try await Self.startFilteredDiscovery(harness)
            #expect(try await Self.discovering(harness))
            #expect(try await Self.reportsDuringSilentWindow(after: deaf, harness).isEmpty, "no device is added")

            try await harness.call(Self.adapter, "org.bluez.Adapter1", "StopDiscovery")
            try await harness.call(Self.adapter, "org.bluez.Adapter1", "StartDiscovery")
            let restarted = harness.signals.mark
            #expect(try await Self.discovering(harness))
            #expect(try await Self.reportsDuringSilentWindow(after: restarted, harness).isEmpty, "a restart does not cure it")
            #expect(try await harness.managedObjects().keys.sorted() == ["/org/bluez", Self.adapter], "no device object")

            try await Self.powerCycle(harness)
            let cured = harness.signals.mark
            try await harness.call(Self.adapter, "org.bluez.Adapter1", "StartDiscovery")
            _ = try await harness.signals.next(after: cured) { $0.isInterfacesAdded(at: Self.strapPath) }
            let adapter = try await Self.inspectAdapter(harness)
            #expect(adapter["scanner_deaf"] == "no")
            #expect(adapter["power_offs"] == "1" && adapter["power_ons"] == "1")
            #expect(adapter["discovery_starts"] == "3")
        }
    }

    /// StopDiscovery and StartDiscovery, as the watchdog's first step, and one more StartDiscovery: all refused as
    /// BlueZ refuses them when the controller will not scan (no session was started for this client).
    static func expectRestartRefused(_ harness: SimulatorHarness) async {
        await #expect(throws: BusError.remote(name: "org.bluez.Error.Failed", message: "No discovery started")) {
            try await harness.call(adapter, "org.bluez.Adapter1", "StopDiscovery")
        }
        let inProgress = BusError.remote(name: "org.bluez.Error.InProgress", message: "Operation already in progress")
        await #expect(throws: inProgress) { try await harness.call(adapter, "org.bluez.Adapter1", "StartDiscovery") }
        await #expect(throws: inProgress) { try await harness.call(adapter, "org.bluez.Adapter1", "StartDiscovery") }
    }

    @Test func aStuckDiscoveryAnswersInProgressWithDiscoveringFalseUntilAPowerCycle() async throws {
        try await SimulatorHarness.with { harness in
            try await Self.startFilteredDiscovery(harness)
            _ = try await harness.signals.next { $0.isInterfacesAdded(at: Self.strapPath) }

            let stuck = harness.signals.mark
            try await harness.control.stickDiscovery()
            // The scan under way stops with the controller's.
            _ = try await harness.signals.next(after: stuck) { $0.changes(Self.adapter, "org.bluez.Adapter1")?["Discovering"] == false }
            // The watchdog's first step, twice: a restart of discovery cures nothing.
            await Self.expectRestartRefused(harness)
            await Self.expectRestartRefused(harness)
            // Discovering true would have been signalled before StartDiscovery answered, on the same connection.
            let discoveringSignals = harness.signals.all.dropFirst(stuck).compactMap { $0.changes(Self.adapter, "org.bluez.Adapter1")?["Discovering"] }
            #expect(discoveringSignals == [false])
            #expect(try await Self.discovering(harness) == false)
            #expect(try await Self.inspectAdapter(harness)["discovery_stuck"] == "yes")

            try await Self.powerCycle(harness)
            let cured = harness.signals.mark
            try await harness.call(Self.adapter, "org.bluez.Adapter1", "StartDiscovery")
            _ = try await harness.signals.next(after: cured) { $0.changes(Self.adapter, "org.bluez.Adapter1")?["Discovering"] == true }
            _ = try await harness.signals.next(after: cured) { $0.changes(Self.strapPath, "org.bluez.Device1")?["RSSI"] != nil }
            let adapter = try await Self.inspectAdapter(harness)
            #expect(adapter["discovery_stuck"] == "no")
            #expect(adapter["discovery_starts"] == "2", "the refused starts are not counted")
        }
    }

    /// The strap is paired (bluetoothd stores it); the thermometer is only known from a discovery.
    static let pairedStrapScenario = SimulatorHarness.scenario().replacingOccurrences(
        of: "    name: HRM-Sim\n", with: "    name: HRM-Sim\n    paired: true\n")

    @Test func aRemovedAdapterTakesItsDevicesWithItAndComesBackWithThePairedOnes() async throws {
        try await SimulatorHarness.with(Self.pairedStrapScenario) { harness in
            #expect(try await harness.managedObjects()[Self.strapPath]?["org.bluez.Device1"]?["Paired"] == true)
            try await harness.connect(SimulatorHarness.strap)
            try await harness.discover(SimulatorHarness.thermometer)
            let strapObjects = try await harness.managedObjects().keys.filter { $0.isDescendant(of: Self.strapPath) }
            #expect(strapObjects.count > 1, "the strap's GATT objects are exported")

            let removal = harness.signals.mark
            try await harness.control.removeAdapter()
            let adapterRemoved = try await harness.signals.next(after: removal) { $0.isInterfacesRemoved(at: Self.adapter) }
            #expect(adapterRemoved.body[1].stringArrayValue == ["org.bluez.Adapter1"])
            let signals = Array(harness.signals.all.dropFirst(removal))
            let adapterIndex = try #require(signals.firstIndex { $0.isInterfacesRemoved(at: Self.adapter) })
            let disconnected = try #require(signals.firstIndex { $0.changes(Self.strapPath, "org.bluez.Device1")?["Connected"] == false })
            for path in strapObjects + [Self.thermometerPath] {
                // Battery1 goes with the link, before Connected false; the objects themselves after.
                let index = try #require(signals.firstIndex {
                    $0.isInterfacesRemoved(at: path) && $0.body[1].stringArrayValue != ["org.bluez.Battery1"]
                }, "\(path) removed")
                #expect(disconnected < index && index < adapterIndex, "links drop, then the devices go, then the adapter")
            }
            #expect(try await harness.managedObjects().keys.sorted() == ["/org/bluez"])
            // The removed paths are unknown objects, as when bluetoothd lost the index.
            let unknown = "org.freedesktop.DBus.Error.UnknownObject"
            await #expect(throws: BusError.self) { try await harness.call(Self.adapter, "org.bluez.Adapter1", "StartDiscovery") }
            do throws(BusError) {
                _ = try await harness.property(Self.adapter, "org.bluez.Adapter1", "Powered")
                Issue.record("Get on the removed adapter answered")
            } catch {
                #expect(error.remoteName == unknown)
            }
            do throws(BusError) {
                try await harness.call(Self.strapPath, "org.bluez.Device1", "Connect")
                Issue.record("Connect on the removed strap answered")
            } catch {
                #expect(error.remoteName == unknown)
            }
            // Removing twice, powering or faulting the absent adapter: clear control errors.
            let removed = BusError.remote(name: "org.wear2mqtt.Simulator.Error.AdapterRemoved",
                                          message: "the adapter is removed (RestoreAdapter brings it back)")
            await #expect(throws: removed) { try await harness.control.removeAdapter() }
            await #expect(throws: removed) { try await harness.control.setPowered(true) }
            await #expect(throws: removed) { try await harness.control.stickDiscovery() }
            #expect(try await Self.inspectAdapter(harness)["adapter"] == "removed")

            let restore = harness.signals.mark
            try await harness.control.restoreAdapter()
            let adapterAdded = try await harness.signals.next(after: restore) { $0.isInterfacesAdded(at: Self.adapter) }
            let adapter = try #require(adapterAdded.body[1].stringKeyedDictionary?["org.bluez.Adapter1"]?.stringKeyedDictionary)
            #expect(adapter["Discovering"] == false)
            #expect(adapter["Address"] == "00:1A:7D:DA:71:13")
            let strapAdded = try await harness.signals.next(after: restore) { $0.isInterfacesAdded(at: Self.strapPath) }
            let strap = try #require(strapAdded.body[1].stringKeyedDictionary?["org.bluez.Device1"]?.stringKeyedDictionary)
            #expect(strap["Paired"] == true && strap["Connected"] == false)
            _ = try await harness.signals.next(after: restore) { $0.changes(Self.adapter, "org.bluez.Adapter1")?["Powered"] == true }
            #expect(try await harness.property(Self.adapter, "org.bluez.Adapter1", "Powered") == true)
            #expect(try await harness.managedObjects().keys.sorted() == ["/org/bluez", Self.adapter, Self.strapPath],
                    "the thermometer comes back only when sighted")
            await #expect(throws: BusError.remote(name: "org.wear2mqtt.Simulator.Error.AdapterPresent",
                                                  message: "the adapter is present (RemoveAdapter takes it away)")) {
                try await harness.control.restoreAdapter()
            }

            // The adapter works again: the paired strap connects, a discovery sights the thermometer.
            let again = harness.signals.mark
            try await harness.call(Self.strapPath, "org.bluez.Device1", "Connect")
            #expect(try await harness.property(Self.strapPath, "org.bluez.Device1", "Connected") == true)
            try await harness.call(Self.adapter, "org.bluez.Adapter1", "StartDiscovery")
            _ = try await harness.signals.next(after: again) { $0.isInterfacesAdded(at: Self.thermometerPath) }
        }
    }

    @Test func anUnknownCureIsAControlErrorNamingTheChoices() async throws {
        try await SimulatorHarness.with { harness in
            await #expect(throws: BusError.remote(name: "org.wear2mqtt.Simulator.Error.InvalidArgument",
                                                  message: "\"sometimes\" is not what clears a deaf scanner (restart or power)")) {
                try await harness.client.call(destination: SimulatorControl.busName, path: SimulatorControl.path,
                                              interface: SimulatorControl.interface, member: "DeafenScanner",
                                              arguments: [.string("sometimes")], timeout: .seconds(10))
            }
            let adapter = try await Self.inspectAdapter(harness)
            #expect(adapter["scanner_deaf"] == "no")
        }
    }

    @Test func theScenarioTimelineRemovesAndRestoresTheAdapter() async throws {
        try await SimulatorHarness.with(SimulatorHarness.scenario(extra: """
        faults:
          - { at: 2s, action: remove_adapter }
          - { at: 3s, action: restore_adapter }
        """)) { harness in
            // The recorder subscribes right after the simulator starts, long before 2 s.
            let removed = try await harness.signals.next(within: .seconds(30)) { $0.isInterfacesRemoved(at: Self.adapter) }
            #expect(removed.body[1].stringArrayValue == ["org.bluez.Adapter1"])
            _ = try await harness.signals.next(within: .seconds(30)) { $0.isInterfacesAdded(at: Self.adapter) }
            _ = try await harness.signals.next(within: .seconds(30)) { $0.changes(Self.adapter, "org.bluez.Adapter1")?["Powered"] == true }
        }
    }
}
