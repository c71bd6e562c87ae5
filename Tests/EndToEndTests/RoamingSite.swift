import DBus
import Foundation
import Simulator
import Testing
import Wear2MQTTTesting

/// A site of real gateways for the roaming suites (docs/roaming.md): one mosquitto, or two bridged to each other; one
/// room per gateway, each with its own private bus and its own `wear2mqtt-sim` simulating the same strap at the level
/// that room's adapter hears it; a `mosquitto_sub` witness of the base topic on every broker, each message of which
/// wakes `until`. The wearer walks through the simulators' `SetRSSI`. Every process is stopped by pid afterwards, also
/// when the test throws.
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
    let witnesses: [MosquittoWitness]
    /// Told of every message any witness prints.
    let changes: ChangeNotifier
    var rooms: [String: Room]

    var broker: MosquittoBroker { brokers[0] }

    /// Every payload on `topic` (under the base) the witness of broker `on` saw, in its order.
    func payloads(_ topic: String, on broker: Int = 0) -> [String] { witnesses[broker].payloads("\(base)/\(topic)") }

    /// True as soon as `condition` holds, checked now and after each message a witness prints; false if it still does
    /// not after `timeout`, a failure guard in real time.
    func until(timeout: Duration = .seconds(20), _ condition: () async throws -> Bool) async rethrows -> Bool {
        try await changes.until(timeout: timeout, condition)
    }

    /// The sighting reports of `gateway` (its `bridge/site/sightings/<gateway>`, every `roaming.report_interval_s`) the
    /// witness of broker `on` saw.
    func reports(of gateway: String, on broker: Int = 0) -> Int { payloads("bridge/site/sightings/\(gateway)", on: broker).count }

    /// True once every gateway `before` names has published `count` more sighting reports than it counted: each has
    /// gone through that many report intervals of its own since, so whatever it was to publish in that time it has
    /// published. Every one of them must be running (a gateway stopped or gone reports nothing).
    func untilEachReported(_ count: Int, after before: [String: Int], timeout: Duration = .seconds(30)) async -> Bool {
        await until(timeout: timeout) {
            before.allSatisfy { gateway, seen in reports(of: gateway) >= seen + count }
        }
    }

    /// The strap's level in each report of `gateway` after its first `after` that heard it.
    func heardLevels(of gateway: String, after: Int) -> [Double] {
        payloads("bridge/site/sightings/\(gateway)").dropFirst(after).compactMap { report in
            let strap = (json(report)?["devices"] as? [String: Any])?["strap"] as? [String: Any]
            guard let heard = strap?["heard"] as? Int, heard > 0 else { return nil }
            return (strap?["rssi"] as? NSNumber)?.doubleValue
        }
    }

    /// The sighting reports of every gateway so far: the site's own clock, a report per gateway and interval.
    var allReports: Int { rooms.keys.reduce(0) { $0 + reports(of: $1) } }

    /// The reports each gateway has published so far, for `untilEachReported`.
    var reportCounts: [String: Int] { Dictionary(uniqueKeysWithValues: rooms.keys.map { ($0, reports(of: $0)) }) }

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
        var witnesses: [MosquittoWitness] = []
        var rooms: [String: Room] = [:]
        let changes = ChangeNotifier()
        var site: RoamingSite { RoamingSite(brokers: brokers, base: base, witnesses: witnesses, changes: changes, rooms: rooms) }
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
                let witness = try MosquittoWitness(port: broker.port, topics: ["\(base)/#"], arguments: ["-V", "5"],
                                                   directory: broker.directory, name: "witness")
                witness.changes.forward(to: changes)
                witnesses.append(witness)
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
            let joined = await site.until(timeout: .seconds(60)) {
                names.allSatisfy { !site.payloads("bridge/site/gateways/\($0)").isEmpty }
            }
            guard joined else { throw TestSetupError("not every gateway joined the site: \(names)") }
            for room in rooms.values {
                guard await room.control.untilServing() else { throw TestSetupError("the \(room.name) simulator does not serve") }
                try await room.control.setAdvertising(strap, true)
            }
        } catch {
            await site.stop()
            throw error
        }
        return site
    }

    /// Waits until a probe published on the first broker reaches the second one's witness: the bridge is up. Both
    /// probes are retained, so neither is missed by a subscriber that comes later: the second broker's witness
    /// sees its own broker's probe once it has subscribed, and the bridge gets the first broker's (retained messages
    /// are sent to each new subscription) whenever it connects.
    private static func waitForTheBridge(_ site: RoamingSite) async throws {
        try await MosquittoClients.publish(port: site.brokers[1].port, topic: "\(site.base)/probe/witness", message: "subscribed",
                                           extraArguments: ["-r"])
        guard await site.until(timeout: .seconds(30), { !site.payloads("probe/witness", on: 1).isEmpty }) else {
            throw TestSetupError("the second broker's witness never subscribed: \(site.brokers[1].directory.path)")
        }
        try await MosquittoClients.publish(port: site.broker.port, topic: "\(site.base)/probe/bridge", message: "crossed",
                                           extraArguments: ["-r"])
        guard await site.until(timeout: .seconds(30), { !site.payloads("probe/bridge", on: 1).isEmpty }) else {
            throw TestSetupError("the bridge between the two brokers did not come up: \(site.brokers[1].directory.path)")
        }
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
