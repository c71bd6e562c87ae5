import BlueZ
import DBus
import Foundation
import Simulator
import Synchronization
import Testing
import Wear2MQTTTesting
import Wearables

/// The BlueZ client against the project's BlueZ simulator on a private bus: the client cannot tell it from
/// bluetoothd, so what works here is what the gateway does on a Raspberry Pi.
@Suite(.timeLimit(.minutes(2)))
struct BlueZClientSimulatorTests {
    static let strap = "C0:FF:EE:00:00:01"
    static let tag = "C0:FF:EE:00:00:04"
    static let heartRateService = GATTUUID.string(for: GATTUUID.Service.heartRate)
    static let heartRateMeasurement = CharacteristicReference(service: heartRateService,
                                                              characteristic: GATTUUID.string(for: GATTUUID.Characteristic.heartRateMeasurement))

    static let scenario = """
    seed: 7
    adapter:
      address: "00:1A:7D:DA:71:13"
    devices:
      - kind: heart_rate_strap
        address: \(strap)
        name: HRM-Sim
        rssi: -55
        advertising_interval: 100ms
        pairing: { method: request_passkey, passkey: 123456 }
        options: { rate_hz: 20, battery: 77, manufacturer: Polar Electro Oy, model: H10 }
      - kind: key_finder
        address: \(tag)
        advertising_interval: 100ms
    """

    /// Bus, simulator and a started client.
    struct Setup {
        let daemon: DBusDaemon
        let simulator: BlueZSimulator
        let client: BlueZClient
        let control: SimulatorControlClient
        /// The client's model changes: what the waits below wake on.
        let model: ModelChanges

        static func start() async throws -> Setup {
            let daemon = try await DBusDaemon()
            let simulator = try await BlueZSimulator.start(try ScenarioLoader.load(yaml: BlueZClientSimulatorTests.scenario),
                                                           on: .address(daemon.address))
            let client = BlueZClient(connection: try BusConnection(.address(daemon.address)))
            let model = ModelChanges(client)
            try await client.start()
            let control = SimulatorControlClient(bus: try BusConnection(.address(daemon.address)))
            return Setup(daemon: daemon, simulator: simulator, client: client, control: control, model: model)
        }

        func stop() async {
            model.stop()
            client.connection.close()
            control.bus.close()
            await simulator.stop()
            await daemon.stop()
        }

        func adapter() throws -> AdapterInfo { try client.adapter(.address(BluetoothAddress("00:1A:7D:DA:71:13")!)) }

        /// Discovers until `address` is known and returns its path.
        func discover(_ address: String) async throws -> ObjectPath {
            let adapter = try adapter()
            try await client.startDiscovery(adapter: adapter.path, filter: BlueZ.DiscoveryFilter())
            let wanted = BluetoothAddress(address)!
            let seen = await model.until { client.model.device(address: wanted) != nil }
            try await client.stopDiscovery(adapter: adapter.path)
            try #require(seen, "\(address) was not discovered")
            return try #require(client.model.device(address: wanted)).path
        }
    }

    @Test func discoveryWithAServiceFilterFindsTheStrapWithItsAdvertisement() async throws {
        let setup = try await Setup.start()
        let adapter = try setup.adapter()
        #expect(adapter.id == "hci0" && adapter.powered)
        try await setup.client.startDiscovery(adapter: adapter.path, filter: BlueZ.DiscoveryFilter(serviceUUIDs: [Self.heartRateService]))
        let strap = BluetoothAddress(Self.strap)!
        #expect(await setup.model.until { setup.client.model.device(address: strap)?.rssi != nil })
        let device = try #require(setup.client.model.device(address: strap))
        #expect(device.name == "HRM-Sim")
        #expect(device.serviceUUIDs.contains(Self.heartRateService))
        #expect(setup.client.model.device(address: BluetoothAddress(Self.tag)!) == nil, "the filter admits heart-rate devices only")
        try await setup.client.stopDiscovery(adapter: adapter.path)
        await setup.stop()
    }

    @Test func connectWaitsForServicesThenReadsAndWrites() async throws {
        let setup = try await Setup.start()
        let strap = try await setup.discover(Self.strap)
        try await setup.client.connect(strap)
        let info = try #require(setup.client.model.devices[strap])
        #expect(info.connected && info.servicesResolved)
        let battery = try #require(setup.client.model.characteristic(device: strap, uuid: GATTUUID.string(for: GATTUUID.Characteristic.batteryLevel)))
        #expect(try BatteryLevel.decode(try await setup.client.read(battery.path)).percent == 77)
        let manufacturer = try #require(setup.client.model.characteristic(device: strap, uuid: GATTUUID.string(for: GATTUUID.Characteristic.manufacturerName)))
        #expect(try DeviceInformationString.decode(try await setup.client.read(manufacturer.path)) == "Polar Electro Oy")

        let tag = try await setup.discover(Self.tag)
        try await setup.client.connect(tag)
        let alert = try #require(setup.client.model.characteristic(device: tag, uuid: GATTUUID.string(for: GATTUUID.Characteristic.alertLevel)))
        try await setup.client.write(alert.path, AlertLevel.high.encode(), withResponse: false)
        // eventually: a write without response crosses the dbus-daemon process to the simulator, and nothing tells the
        // client it has arrived; the simulator's record of it is read over a second connection
        #expect(await eventually {
            (try? await setup.control.received(Self.tag, characteristic: "2a06")) == [[2]]
        })
        try await setup.client.disconnect(strap)
        #expect(await setup.model.until { setup.client.model.devices[strap]?.connected == false })
        await setup.stop()
    }

    @Test(arguments: [NotifyMethod.acquire, .startNotify])
    func heartRateNotificationsArriveAndDecode(method: NotifyMethod) async throws {
        let setup = try await Setup.start()
        let strap = try await setup.discover(Self.strap)
        try await setup.client.connect(strap)
        let measurement = try #require(setup.client.model.characteristic(device: strap, service: Self.heartRateService,
                                                                         uuid: Self.heartRateMeasurement.characteristic))
        let values = try await setup.client.notifications(measurement.path, method: method)
        var decoded: [HeartRateMeasurement] = []
        for await value in values {
            decoded.append(try HeartRateMeasurement.decode(value))
            if decoded.count == 5 { break }
        }
        #expect(decoded.count == 5)
        #expect(decoded.allSatisfy { (30...220).contains($0.bpm) })
        await setup.stop()
    }

    @Test func aDroppedLinkEndsTheStreamAndTheSubscriptionComesBackAfterReconnecting() async throws {
        let setup = try await Setup.start()
        let strap = try await setup.discover(Self.strap)
        try await setup.client.connect(strap)
        let events = Mutex<[String]>([])
        // Told of every entry the reader adds, and (forwarded) of every model change.
        let seen = ChangeNotifier()
        setup.model.changes.forward(to: seen)
        let subscription = setup.client.subscription(device: strap, Self.heartRateMeasurement)
        let reader = Task {
            var values = 0
            func note(_ entry: String) {
                events.withLock { $0.append(entry) }
                seen.changed()
            }
            for await event in subscription {
                switch event {
                case .subscribed: note("subscribed")
                case .value: values += 1; if values == 3 { note("values") }
                case .interrupted: values = 0; note("interrupted")
                case .failed(let error): note("failed \(error)")
                }
            }
        }
        #expect(await seen.until(timeout: .seconds(20)) { events.withLock { $0 } == ["subscribed", "values"] })
        try await setup.control.dropLink(Self.strap)
        #expect(await seen.until(timeout: .seconds(20)) { events.withLock { $0.contains("interrupted") } })
        #expect(await seen.until(timeout: .seconds(20)) { setup.client.model.devices[strap]?.connected == false })
        try await setup.client.connect(strap)
        #expect(await seen.until(timeout: .seconds(20)) {
            events.withLock { $0 } == ["subscribed", "values", "interrupted", "subscribed", "values"]
        })
        reader.cancel()
        await setup.stop()
    }

    @Test func inProgressIsATypedErrorThatARetrySucceedsAfter() async throws {
        let setup = try await Setup.start()
        let strap = try await setup.discover(Self.strap)
        try await setup.control.failNextCall(Self.strap, method: "Connect")
        await #expect {
            try await setup.client.connect(strap)
        } throws: { error in
            guard case .inProgress = error as? BlueZError else { return false }
            return true
        }
        try await setup.control.failNextCall(Self.strap, method: "Connect")
        try await retryingBlueZ(initialDelay: .milliseconds(50)) { () throws(BlueZError) in try await setup.client.connect(strap) }
        #expect(setup.client.model.devices[strap]?.servicesResolved == true)
        await setup.stop()
    }

    @Test func pairingAsksTheAgentForThePasskeyAndAWrongOneFails() async throws {
        let setup = try await Setup.start()
        let strap = try await setup.discover(Self.strap)
        let answer = Mutex<UInt32>(111_111)
        let asked = Mutex(0)
        let agent = PairingAgent(client: setup.client) { request in
            guard case .passkey = request else { return .reject }
            asked.withLock { $0 += 1 }
            return .passkey(answer.withLock { $0 })
        }
        try await agent.register()
        await #expect {
            try await setup.client.pair(strap)
        } throws: { error in
            guard case .authenticationFailed = error as? BlueZError else { return false }
            return true
        }
        #expect(setup.client.model.devices[strap]?.paired == false)
        answer.withLock { $0 = 123_456 }
        try await setup.client.pair(strap)
        #expect(await setup.model.until { setup.client.model.devices[strap]?.paired == true })
        #expect(asked.withLock { $0 } == 2)
        await setup.stop()
    }
}

/// bluetoothd killed and started again, as a process: the client notices, rebuilds its model and can
/// connect again.
@Suite(.timeLimit(.minutes(2)))
struct BlueZRestartTests {
    static var simulatorPath: String {
        let bundle = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent("wear2mqtt-sim").path
    }

    func startSimulator(_ daemon: DBusDaemon, scenario: String, name: String) throws -> ChildProcess {
        try ChildProcess(executable: Self.simulatorPath, arguments: ["run", "--bus", daemon.address, "--scenario", scenario],
                         outputPath: daemon.directory.file("\(name).out"), errorPath: daemon.directory.file("\(name).err"))
    }

    @Test func aRestartedBluetoothdIsFollowedAndItsDevicesConnectAgain() async throws {
        let daemon = try await DBusDaemon()
        let scenario = try daemon.directory.write("scenario.yaml", BlueZClientSimulatorTests.scenario)
        var simulator = try startSimulator(daemon, scenario: scenario, name: "first")
        let client = BlueZClient(connection: try BusConnection(.address(daemon.address)))
        let model = ModelChanges(client)
        try await client.start()
        #expect(await model.until { client.isServiceAvailable && !client.model.adapters.isEmpty })
        let resets = Mutex(0)
        let events = client.events()
        let watcher = Task {
            for await event in events where event == .reset {
                resets.withLock { $0 += 1 }
                model.changes.changed()
            }
        }
        let adapter = try client.adapter()
        try await client.startDiscovery(adapter: adapter.path)
        let strap = BluetoothAddress(BlueZClientSimulatorTests.strap)!
        #expect(await model.until { client.model.device(address: strap) != nil })
        let path = try #require(client.model.device(address: strap)).path
        try await client.connect(path)

        simulator.signal(SIGKILL)
        await simulator.waitForExit()
        #expect(await model.until { !client.isServiceAvailable })
        #expect(client.model.devices.isEmpty)

        simulator = try startSimulator(daemon, scenario: scenario, name: "second")
        #expect(await model.until(timeout: .seconds(30)) { client.isServiceAvailable && !client.model.adapters.isEmpty })
        #expect(await model.until { resets.withLock { $0 } >= 2 })
        try await client.startDiscovery(adapter: try client.adapter().path)
        #expect(await model.until(timeout: .seconds(30)) { client.model.device(address: strap) != nil })
        try await client.connect(path)
        #expect(client.model.devices[path]?.servicesResolved == true)

        watcher.cancel()
        model.stop()
        client.connection.close()
        await simulator.stop()
        await daemon.stop()
    }
}
