import DBus
import Foundation
import Simulator
import Testing
import Wear2MQTTTesting

/// A site of real gateways for the roaming suites (docs/roaming.md): one mosquitto, or two bridged to each other; one
/// room per gateway, each with its own private bus and its own `wear2mqtt-sim` simulating the same strap at the level
/// that room's adapter hears it; a `mosquitto_sub` witness of the base topic on every broker. The wearer walks through
/// the simulators' `SetRSSI`. Every process is stopped by pid afterwards, also when the test throws.
struct RoamingSite {
    static let strap = "C0:FF:EE:00:00:01"

    /// One room: a bus, a simulator hearing the strap, a gateway named after the room on one of the brokers.
    struct Room {
        let name: String
        /// Index of the broker its gateway uses.
        let broker: Int
        let daemon: DBusDaemon
        let simulator: ChildProcess
        let control: SimulatorControlClient
        var gateway: GatewayProcess

        func stop() async {
            // A gateway stopped to cut it off (SIGSTOP) takes no SIGTERM until it runs again.
            gateway.child.signal(SIGCONT)
            await gateway.child.stop()
            control.bus.close()
            await simulator.stop()
            await daemon.stop()
        }
    }

    /// How the site's processes are set up; the defaults are those of a site as documented.
    struct Setup {
        /// Lines of the gateways' `roaming:` section besides `enabled: true` (`hysteresis_s: 0.4`).
        var roaming: [String] = []
        /// The gateways' `mqtt.keepalive_s`: 5 as in every end-to-end test unless said.
        var keepaliveSeconds = 5
        /// How often the simulated strap advertises.
        var advertisingInterval = "250ms"
        /// How many brokers: a second one is bridged to the first (`topic <base>/# both 1`, MQTT 5).
        var brokers = 1
        /// The broker of each room, by index; a room not named here uses the first.
        var brokerOfRoom: [String: Int] = [:]
        /// The strap's resting heart rate as each room's simulator makes it (72 unless named): rates far apart tell
        /// which gateway a sample came through.
        var restingRateOfRoom: [String: Int] = [:]
    }

    let brokers: [MosquittoBroker]
    let base: String
    /// One witness per broker, subscribed to everything under the base.
    let witnesses: [ChildProcess]
    var rooms: [String: Room]

    var broker: MosquittoBroker { brokers[0] }

    /// Every payload on `topic` (under the base) the witness of broker `on` saw, in its order.
    /// Split as bytes: the witness of a long test holds hundreds of kilobytes, read again on every poll, and a split
    /// by characters costs the test process (where the in-memory suites run too) many times more.
    func payloads(_ topic: String, on broker: Int = 0) -> [String] {
        let prefix = Array("\(base)/\(topic) ".utf8)
        return witnesses[broker].output.utf8.split(separator: UInt8(ascii: "\n")).filter { $0.starts(with: prefix) }
            .map { String(decoding: $0.dropFirst(prefix.count), as: UTF8.self) }
    }

    func json(_ text: String) -> [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] }

    /// The gateway named by the last `presence` of the strap.
    var presence: String? { payloads("strap/presence").last.flatMap(json)?["gateway"] as? String }

    /// The strap's owners in the order the referee assigned them (its retained `owners/strap` messages).
    var owners: [String] { payloads("bridge/site/owners/strap").compactMap { json($0)?["gateway"] as? String } }

    /// The `transaction` of every response on `topic` the witness of broker `on` saw.
    func transactions(_ topic: String, on broker: Int = 0) -> [String] {
        payloads(topic, on: broker).compactMap { json($0)?["transaction"] as? String }
    }

    func walk(_ levels: [String: Int]) async throws {
        for (room, rssi) in levels { try await rooms[room]?.control.setRSSI(Self.strap, rssi) }
    }

    func stop() async {
        for room in rooms.values { await room.stop() }
        for witness in witnesses { await witness.stop() }
        for broker in brokers.reversed() { await broker.remove() }
    }

    static func start(_ levels: [String: Int], _ setup: Setup = Setup()) async throws -> RoamingSite {
        let base = "site/\(UUID().uuidString.prefix(8))"
        var brokers: [MosquittoBroker] = []
        var witnesses: [ChildProcess] = []
        var rooms: [String: Room] = [:]
        var site: RoamingSite { RoamingSite(brokers: brokers, base: base, witnesses: witnesses, rooms: rooms) }
        do {
            for index in 0..<setup.brokers {
                // The second broker bridges the base topic both ways to the first, as a house with a broker per
                // floor would: MQTT 5 (so message expiry crosses), QoS 1, reconnecting within a second.
                let bridge = index == 0 ? [] : [
                    "connection \(base.replacingOccurrences(of: "/", with: "-"))-\(index)",
                    "address 127.0.0.1:\(brokers[0].port)", "topic \(base)/# both 1", "bridge_protocol_version mqttv50",
                    "cleansession true", "restart_timeout 1", "notifications false",
                ]
                let broker = try MosquittoBroker(extraLines: bridge)
                brokers.append(broker)
                try await broker.start()
                witnesses.append(try MosquittoClients.subscriber(port: broker.port, topics: ["\(base)/#"], arguments: ["-V", "5"],
                                                                 directory: broker.directory, name: "witness"))
            }
            if setup.brokers > 1 { try await waitForTheBridge(site) }
            let simulatorPath = URL(fileURLWithPath: GatewayProcess.executablePath).deletingLastPathComponent()
                .appendingPathComponent("wear2mqtt-sim").path
            for (name, rssi) in levels.sorted(by: { $0.key < $1.key }) {
                let brokerIndex = setup.brokerOfRoom[name] ?? 0
                let daemon = try await DBusDaemon()
                let scenario = try daemon.directory.write("scenario.yaml", """
                seed: 11
                adapter:
                  address: "00:1A:7D:DA:71:13"
                devices:
                  - kind: heart_rate_strap
                    address: \(strap)
                    rssi: \(rssi)
                    advertising: false
                    advertising_interval: \(setup.advertisingInterval)
                    options: { bpm: \(setup.restingRateOfRoom[name] ?? 72) }
                """)
                let simulator = try ChildProcess(executable: simulatorPath, arguments: ["run", "--bus", daemon.address, "--scenario", scenario],
                                                 outputPath: daemon.directory.file("sim.out"), errorPath: daemon.directory.file("sim.err"))
                let control = SimulatorControlClient(bus: try BusConnection(.address(daemon.address)))
                let configuration = GatewayProcess.configuration(
                    port: brokers[brokerIndex].port, stateDirectory: daemon.directory.file("state"), baseTopic: base, extra: """
                    bluez:
                      bus: \(daemon.address)
                    devices:
                      - address: "\(strap)"
                        driver: standard
                        name: strap
                    roaming:
                      enabled: true
                    \(setup.roaming.map { "  " + $0 }.joined(separator: "\n"))
                    """)
                    .replacingOccurrences(of: "  id: e2e\n", with: "  id: \(name)\n  room: \(name)\n")
                    .replacingOccurrences(of: "  keepalive_s: 5\n", with: "  keepalive_s: \(setup.keepaliveSeconds)\n")
                let path = try daemon.directory.write("gateway.yaml", configuration)
                let gateway = try GatewayProcess.start(arguments: ["run", "--config", path], in: daemon.directory, name: name)
                rooms[name] = Room(name: name, broker: brokerIndex, daemon: daemon, simulator: simulator, control: control, gateway: gateway)
            }
            // The strap appears once every gateway is in the site: started one after another, on a loaded machine the
            // first could otherwise be the only one its referee knows when it gives the strap out.
            let names = Array(rooms.keys)
            let joined = await eventually(timeout: .seconds(60), interval: .milliseconds(100)) {
                names.allSatisfy { !site.payloads("bridge/site/gateways/\($0)").isEmpty }
            }
            guard joined else { throw TestSetupError("not every gateway joined the site: \(names)") }
            for room in rooms.values { try await room.control.setAdvertising(strap, true) }
        } catch {
            await site.stop()
            throw error
        }
        return site
    }

    /// Publishes a probe on the first broker until the second one's witness sees it: the bridge is up.
    private static func waitForTheBridge(_ site: RoamingSite) async throws {
        var probes = 0
        let crossed = await eventually(timeout: .seconds(30), interval: .milliseconds(100)) {
            probes += 1
            try? await MosquittoClients.publish(port: site.broker.port, topic: "\(site.base)/probe", message: "\(probes)")
            return !site.payloads("probe", on: 1).isEmpty
        }
        guard crossed else { throw TestSetupError("the bridge between the two brokers did not come up: \(site.brokers[1].directory.path)") }
    }

    /// Starts a site, runs `body`, and stops every process whether `body` returns or throws.
    static func with(_ levels: [String: Int], _ setup: Setup = Setup(), _ body: (inout RoamingSite) async throws -> Void) async throws {
        var site = try await start(levels, setup)
        do { try await body(&site) } catch {
            await site.stop()
            throw error
        }
        await site.stop()
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
