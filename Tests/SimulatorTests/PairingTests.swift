import DBus
import Simulator
import Synchronization
import Testing
import Wear2MQTTTesting

/// An Agent1 object the test exports and registers, answering passkeys and confirmations as told.
final class TestAgent: Sendable {
    static let path: ObjectPath = "/test/agent"
    let requests = Mutex<[String]>([])

    static func export(on bus: BusConnection, passkey: UInt32, confirms: Bool = true) -> TestAgent {
        let agent = TestAgent()
        bus.objects.export(path, interfaces: [(InterfaceDefinition("org.bluez.Agent1", methods: [
            MethodDefinition("RequestPasskey", input: "o", output: "u") { call in
                agent.requests.withLock { $0.append("RequestPasskey \(call.arguments[0])") }
                return [.uint32(passkey)]
            },
            MethodDefinition("RequestConfirmation", input: "ou") { call throws(BusError) in
                agent.requests.withLock { $0.append("RequestConfirmation \(call.arguments[1])") }
                guard confirms else { throw .remote(name: "org.bluez.Error.Rejected", message: "no match") }
                return []
            },
            MethodDefinition("DisplayPasskey", input: "ouq") { call in
                agent.requests.withLock { $0.append("DisplayPasskey \(call.arguments[1])") }
                return []
            },
            MethodDefinition("Cancel") { _ in
                agent.requests.withLock { $0.append("Cancel") }
                return []
            },
            MethodDefinition("Release") { _ in [] },
        ]), [:])])
        return agent
    }
}

@Suite(.timeLimit(.minutes(2)))
struct PairingTests {
    static let strapPath = SimulatorHarness.devicePath(SimulatorHarness.strap)

    func register(_ harness: SimulatorHarness, capability: String = "KeyboardDisplay") async throws {
        try await harness.call("/org/bluez", "org.bluez.AgentManager1", "RegisterAgent",
                               [.objectPath(TestAgent.path), .string(capability)])
        try await harness.call("/org/bluez", "org.bluez.AgentManager1", "RequestDefaultAgent", [.objectPath(TestAgent.path)])
    }

    @Test func pairingWithTheRightPasskeyThroughTheAgentBondsTheDevice() async throws {
        try await SimulatorHarness.with { harness in
            let agent = TestAgent.export(on: harness.client, passkey: 123456)
            try await register(harness)
            await #expect(throws: BusError.remote(name: "org.bluez.Error.AlreadyExists", message: "Already Exists")) {
                try await harness.call("/org/bluez", "org.bluez.AgentManager1", "RegisterAgent", [.objectPath(TestAgent.path), ""])
            }
            try await harness.discover(SimulatorHarness.strap)
            try await harness.call(Self.strapPath, "org.bluez.Device1", "Pair", timeout: .seconds(15))
            #expect(agent.requests.withLock { $0 } == ["RequestPasskey \(Self.strapPath)"])
            let device = try #require(try await harness.managedObjects()[Self.strapPath]?["org.bluez.Device1"])
            #expect(device["Paired"] == true)
            #expect(device["Bonded"] == true)
            #expect(device["Connected"] == true)
            #expect(device["ServicesResolved"] == true, "Pair answers after services are resolved")
            await #expect(throws: BusError.remote(name: "org.bluez.Error.AlreadyExists", message: "Already Exists")) {
                try await harness.call(Self.strapPath, "org.bluez.Device1", "Pair")
            }
        }
    }

    @Test func aWrongPasskeyIsAuthenticationFailed() async throws {
        try await SimulatorHarness.with { harness in
            _ = TestAgent.export(on: harness.client, passkey: 654321)
            try await register(harness)
            try await harness.discover(SimulatorHarness.strap)
            await #expect(throws: BusError.remote(name: "org.bluez.Error.AuthenticationFailed", message: "Authentication Failed")) {
                try await harness.call(Self.strapPath, "org.bluez.Device1", "Pair", timeout: .seconds(15))
            }
            #expect(try await harness.property(Self.strapPath, "org.bluez.Device1", "Paired") == false)
        }
    }

    @Test func withoutAnAgentAPasskeyDeviceCannotPairButAConfirmingAgentPairsTheTag() async throws {
        try await SimulatorHarness.with { harness in
            try await harness.discover(SimulatorHarness.strap)
            await #expect(throws: BusError.remote(name: "org.bluez.Error.AuthenticationFailed", message: "Authentication Failed")) {
                try await harness.call(Self.strapPath, "org.bluez.Device1", "Pair", timeout: .seconds(15))
            }
            let agent = TestAgent.export(on: harness.client, passkey: 0)
            try await register(harness, capability: "DisplayYesNo")
            let tagPath = SimulatorHarness.devicePath(SimulatorHarness.tag)
            try await harness.discover(SimulatorHarness.tag)
            try await harness.call(tagPath, "org.bluez.Device1", "Pair", timeout: .seconds(15))
            #expect(agent.requests.withLock { $0 }.first?.hasPrefix("RequestConfirmation") == true)
            await #expect(throws: BusError.remote(name: "org.bluez.Error.DoesNotExist", message: "Does Not Exist")) {
                try await harness.call(tagPath, "org.bluez.Device1", "CancelPairing")
            }
        }
    }
}
