import DBus
@testable import Simulator
import Testing
import Wearables
import SimulatedWearables

/// The pure parts of the simulator, without a bus.
struct GATTLayoutTests {
    @Test func aHeartRateStrapsFirstServiceStartsAtHandle0x000cWithBlueZStylePaths() throws {
        let strap = try SimulatedHeartRateStrap(SimulatedDeviceConfiguration(seed: 1))
        let layout = GATTLayout(deviceServices: strap.services, deviceName: strap.deviceName, appearance: 0x0341)
        #expect(layout.services.map(\.pathElement).prefix(3) == ["service0001", "service0008", "service000c"])
        #expect(layout.services[0].isHidden, "GAP is claimed by BlueZ's gap plugin")
        let measurement = try #require(layout.characteristic(BluetoothUUID(0x2A37)))
        #expect(measurement.relativePath == "service000c/char000d")
        #expect(measurement.valueHandle == 0x000e)
        #expect(measurement.descriptors.map(\.relativePath) == ["service000c/char000d/desc000f"])
        #expect(layout.characteristic(BluetoothUUID(0x2A38))?.relativePath == "service000c/char0010")
        #expect(layout.resolvedUUIDs.first == BluetoothUUID(0x1800))
        #expect(layout.exportedServices.contains { $0.uuid == BluetoothUUID(0x1801) })
    }
}

struct DiscoveryFilterTests {
    let strap = DiscoveryFilter.Sighting(address: "C0:FF:EE:00:00:01", name: "HRM", serviceUUIDs: [BluetoothUUID(0x180D)],
                                         rssi: -60, txPower: 4)

    @Test func uuidsRssiPathlossAndPatternDecideWhatIsReported() throws {
        let heartRate = try #require(try DiscoveryFilter.parse(["UUIDs": .strings(["180d"]), "Transport": "le"]))
        #expect(heartRate.matches(strap))
        let thermometer = try #require(try DiscoveryFilter.parse(["UUIDs": .strings(["00001809-0000-1000-8000-00805f9b34fb"])]))
        #expect(!thermometer.matches(strap))
        #expect(try DiscoveryFilter.parse(["RSSI": .int16(-70)])!.matches(strap))
        #expect(!(try DiscoveryFilter.parse(["RSSI": .int16(-50)])!.matches(strap)))
        #expect(try DiscoveryFilter.parse(["Pathloss": .uint16(70)])!.matches(strap))
        #expect(!(try DiscoveryFilter.parse(["Pathloss": .uint16(60)])!.matches(strap)))
        #expect(try DiscoveryFilter.parse(["Pattern": "C0:FF"])!.matches(strap))
        #expect(try DiscoveryFilter.parse(["Pattern": "HR"])!.matches(strap))
        #expect(!(try DiscoveryFilter.parse(["Pattern": "XX"])!.matches(strap)))
        #expect(!(try DiscoveryFilter.parse(["Transport": "bredr"])!.matches(strap)))
        #expect(try DiscoveryFilter.parse([:]) == nil, "an empty dictionary removes the filter")
    }

    @Test func malformedFiltersAreRefused() {
        #expect(throws: DiscoveryFilterError.self) { try DiscoveryFilter.parse(["RSSI": .int32(-60)]) }
        #expect(throws: DiscoveryFilterError.self) { try DiscoveryFilter.parse(["Transport": "radio"]) }
        #expect(throws: DiscoveryFilterError.self) { try DiscoveryFilter.parse(["Colour": "blue"]) }
        #expect(throws: DiscoveryFilterError.self) { try DiscoveryFilter.parse(["UUIDs": .strings(["not-a-uuid"])]) }
        #expect(throws: DiscoveryFilterError.self) { try DiscoveryFilter.parse(["RSSI": .int16(-60), "Pathloss": .uint16(50)]) }
    }

    @Test func sessionsMergeFiltersAndEndWithTheirClients() throws {
        var sessions = DiscoverySessions()
        sessions.setFilter(try DiscoveryFilter.parse(["UUIDs": .strings(["1809"])]), for: ":1.1")
        let started = try sessions.start(":1.1")
        #expect(started)
        #expect(!sessions.reports(strap))
        #expect(sessions.isFiltered)
        let restarted = try sessions.start(":1.2")
        #expect(!restarted, "a second session does not restart discovery")
        #expect(sessions.reports(strap), "a session without filter sees everything")
        #expect(!sessions.isFiltered)
        #expect(throws: DiscoverySessions.Failure.alreadyStarted) { _ = try sessions.start(":1.2") }
        let stoppedByLeaving = sessions.removeClient(":1.2")
        #expect(!stoppedByLeaving)
        let stopped = try sessions.stop(":1.1")
        #expect(stopped)
        #expect(throws: DiscoverySessions.Failure.notStarted) { _ = try sessions.stop(":1.1") }
    }
}

struct NotifySessionsTests {
    @Test func startNotifyAndAcquireNotifyExcludeEachOtherAsInBlueZ() throws {
        var sessions = NotifySessions(canNotify: true, canIndicate: false)
        #expect(try sessions.startNotify(client: ":1.1", connected: true, disconnecting: false) == .register)
        #expect(throws: NotifySessions.Refusal.inProgress) {
            _ = try sessions.startNotify(client: ":1.1", connected: true, disconnecting: false)
        }
        let turnedOn = sessions.registrationSucceeded(client: ":1.1")
        #expect(turnedOn, "Notifying turns true")
        #expect(try sessions.startNotify(client: ":1.1", connected: true, disconnecting: false) == .alreadyActive)
        #expect(throws: NotifySessions.Refusal.inProgress) { try sessions.acquireNotify(client: ":1.2", connected: true) }
        let turnedOff = try sessions.stopNotify(client: ":1.1")
        #expect(turnedOff, "Notifying turns false")
        try sessions.acquireNotify(client: ":1.2", connected: true)
        #expect(throws: NotifySessions.Refusal.notifyAcquired) {
            _ = try sessions.startNotify(client: ":1.1", connected: true, disconnecting: false)
        }
        #expect(!sessions.notifying, "AcquireNotify does not set Notifying")
        let released = sessions.releaseAcquired()
        #expect(released)
    }

    @Test func sessionsSurviveADisconnectionWhenObjectsAreCached() throws {
        var sessions = NotifySessions(canNotify: true, canIndicate: true)
        _ = try sessions.startNotify(client: ":1.1", connected: true, disconnecting: false)
        _ = sessions.registrationSucceeded(client: ":1.1")
        sessions.linkLost()
        #expect(sessions.notifying, "BlueZ leaves Notifying true while disconnected")
        #expect(!sessions.isSubscribed)
        #expect(throws: NotifySessions.Refusal.inProgress) {
            _ = try sessions.startNotify(client: ":1.1", connected: false, disconnecting: false)
        }
        let signalled = sessions.linkRestored()
        #expect(!signalled, "already notifying: no new signal")
        #expect(sessions.isSubscribed)
        #expect(throws: NotifySessions.Refusal.notConnected) {
            _ = try sessions.startNotify(client: ":1.3", connected: true, disconnecting: true)
        }
        #expect(throws: NotifySessions.Refusal.notSupported) {
            var readOnly = NotifySessions(canNotify: false, canIndicate: false)
            _ = try readOnly.startNotify(client: ":1.1", connected: true, disconnecting: false)
        }
    }
}

struct DeviceLinkStateMachineTests {
    @Test func connectAndDisconnectDecideAsBlueZDoes() {
        var link = DeviceLinkStateMachine()
        #expect(link.disconnect() == .notConnected)
        guard case .start(let attempt) = link.connect() else { Issue.record("no attempt"); return }
        #expect(link.connect() == .alreadyConnecting)
        #expect(link.disconnect() == .cancelAttempt(attempt: attempt))
        #expect(link.attemptSucceeded(attempt) == nil, "a cancelled attempt cannot complete")
        guard case .start(let second) = link.connect(), let established = link.attemptSucceeded(second) else {
            Issue.record("no link"); return
        }
        #expect(link.connect() == .alreadyConnected)
        #expect(link.disconnect() == .startDisconnect(link: established))
        #expect(link.disconnect() == .joinDisconnect(link: established))
        #expect(link.linkLost(established + 1).link == nil, "a stale timer is ignored")
        #expect(link.linkLost(established).link == established)
        #expect(!link.isConnected)
    }
}

struct PairingTests_Association {
    @Test func theAgentCallFollowsTheDeviceMethodAndTheAgentCapability() {
        #expect(PairingAssociation.step(for: .requestPasskey, agent: .keyboardDisplay) == .requestPasskey)
        #expect(PairingAssociation.step(for: .requestPasskey, agent: .displayYesNo) == .fail)
        #expect(PairingAssociation.step(for: .requestPasskey, agent: nil) == .fail)
        #expect(PairingAssociation.step(for: .displayPasskey, agent: .displayOnly) == .displayPasskey)
        #expect(PairingAssociation.step(for: .confirm, agent: .displayYesNo) == .requestConfirmation)
        #expect(PairingAssociation.step(for: .confirm, agent: .keyboardOnly) == .requestPasskey)
        #expect(PairingAssociation.step(for: .justWorks, agent: nil) == .justWorks)
    }

    @Test func agentsAreOnePerClientWithAnOptionalDefault() throws {
        var agents = AgentRegistry()
        try agents.register(owner: ":1.1", path: "/agent", capability: "")
        #expect(agents.agent(for: ":1.1")?.capability == .keyboardDisplay)
        #expect(throws: AgentRegistry.Failure.alreadyExists) { try agents.register(owner: ":1.1", path: "/b", capability: "DisplayOnly") }
        #expect(throws: AgentRegistry.Failure.invalidCapability) { try agents.register(owner: ":1.2", path: "/b", capability: "Telepathy") }
        #expect(agents.agent(for: ":1.9") == nil)
        try agents.requestDefault(owner: ":1.1", path: "/agent")
        #expect(agents.agent(for: ":1.9")?.owner == ":1.1")
        #expect(throws: AgentRegistry.Failure.doesNotExist) { try agents.unregister(owner: ":1.1", path: "/other") }
        agents.remove(owner: ":1.1")
        #expect(agents.agent(for: ":1.9") == nil)
    }
}

struct DeviceFaultsTests {
    @Test func refusalsAndOneShotFailuresAreConsumed() {
        var faults = DeviceFaults()
        faults.refuseConnects(2, with: .connectionAttemptFailed)
        faults.failNextCall(of: "ReadValue", with: .busy)
        #expect(faults.takeFailure(for: "Connect") == nil)
        #expect(faults.takeFailure(for: "ReadValue") == .busy)
        #expect(faults.takeFailure(for: "ReadValue") == nil)
        #expect(faults.takeConnectRefusal() == .connectionAttemptFailed)
        #expect(faults.takeConnectRefusal() == .connectionAttemptFailed)
        #expect(faults.takeConnectRefusal() == nil)
    }
}
