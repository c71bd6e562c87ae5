import DBus
import Foundation
import Simulator
import Testing
import Wear2MQTTTesting

/// Issue 26 with real processes: one mosquitto, three gateways, each on its own private bus with its own
/// `wear2mqtt-sim` simulating the same strap at the level the room's adapter hears it, with the default roaming
/// settings (reports every 0.5 s, 6 dB for 4 s, 8 s to count a device gone). The wearer walks by changing the levels
/// through each simulator's control interface. The times are printed as figures beside issue 26's targets, not asserted:
/// a speed target is the benchmark's to check, and a loaded machine must not fail a correct handover.
@Suite
struct RoamingEndToEndTests {
    static let strap = "C0:FF:EE:00:00:01"

    /// One room: a bus, a simulator hearing the strap at `rssi`, a gateway named after the room.
    struct Room {
        let name: String
        let daemon: DBusDaemon
        let simulator: ChildProcess
        let control: SimulatorControlClient
        var gateway: GatewayProcess

        func stop() async {
            await gateway.child.stop()
            control.bus.close()
            await simulator.stop()
            await daemon.stop()
        }
    }

    struct Site {
        let broker: MosquittoBroker
        let base: String
        let witness: ChildProcess
        var rooms: [String: Room]

        func payloads(_ topic: String) -> [String] {
            let prefix = "\(base)/\(topic) "
            return witness.output.split(separator: "\n").filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
        }

        func json(_ text: String) -> [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] }

        /// The gateway named by the last `presence` of the strap.
        var presence: String? { payloads("strap/presence").last.flatMap(json)?["gateway"] as? String }

        var owners: [String] { payloads("bridge/site/owners/strap").compactMap { json($0)?["gateway"] as? String } }

        func walk(_ levels: [String: Int]) async throws {
            for (room, rssi) in levels { try await rooms[room]?.control.setRSSI(RoamingEndToEndTests.strap, rssi) }
        }

        func stop() async {
            for room in rooms.values { await room.stop() }
            await witness.stop()
            await broker.remove()
        }
    }

    static func startSite(_ levels: [String: Int]) async throws -> Site {
        let base = "site/\(UUID().uuidString.prefix(8))"
        let broker = try MosquittoBroker()
        try await broker.start()
        let witness = try MosquittoClients.subscriber(port: broker.port, topics: ["\(base)/#"], arguments: ["-V", "5"],
                                                      directory: broker.directory, name: "witness")
        var rooms: [String: Room] = [:]
        let simulatorPath = URL(fileURLWithPath: GatewayProcess.executablePath).deletingLastPathComponent()
            .appendingPathComponent("wear2mqtt-sim").path
        for (name, rssi) in levels.sorted(by: { $0.key < $1.key }) {
            let daemon = try await DBusDaemon()
            let scenario = try daemon.directory.write("scenario.yaml", """
            seed: 11
            adapter:
              address: "00:1A:7D:DA:71:13"
            devices:
              - kind: heart_rate_strap
                address: \(strap)
                rssi: \(rssi)
                advertising_interval: 250ms
            """)
            let simulator = try ChildProcess(executable: simulatorPath, arguments: ["run", "--bus", daemon.address, "--scenario", scenario],
                                             outputPath: daemon.directory.file("sim.out"), errorPath: daemon.directory.file("sim.err"))
            let control = SimulatorControlClient(bus: try BusConnection(.address(daemon.address)))
            let configuration = GatewayProcess.configuration(
                port: broker.port, stateDirectory: daemon.directory.file("state"), baseTopic: base, extra: """
                bluez:
                  bus: \(daemon.address)
                devices:
                  - address: "\(strap)"
                    driver: standard
                    name: strap
                roaming:
                  enabled: true
                """).replacingOccurrences(of: "  id: e2e\n", with: "  id: \(name)\n  room: \(name)\n")
            let path = try daemon.directory.write("gateway.yaml", configuration)
            let gateway = try GatewayProcess.start(arguments: ["run", "--config", path], in: daemon.directory, name: name)
            rooms[name] = Room(name: name, daemon: daemon, simulator: simulator, control: control, gateway: gateway)
        }
        return Site(broker: broker, base: base, witness: witness, rooms: rooms)
    }

    static func with(_ levels: [String: Int], _ body: (inout Site) async throws -> Void) async throws {
        var site = try await startSite(levels)
        do { try await body(&site) } catch {
            await site.stop()
            throw error
        }
        await site.stop()
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    @Test func theStrapFollowsTheWearerAndSurvivesItsOwnersDeath() async throws {
        try await Self.with(["kitchen": -55, "living": -80, "bedroom": -85]) { site in
            #expect(await eventually(timeout: .seconds(60)) { site.presence == "kitchen" },
                    "presence: \(site.payloads("strap/presence")); kitchen's log: \(site.rooms["kitchen"]!.gateway.child.errorOutput.suffix(3000))")
            #expect(await eventually(timeout: .seconds(30)) { site.payloads("strap/sensor/heart_rate").count >= 3 })

            // The wearer walks into the living room.
            let walked = ContinuousClock.now
            try await site.walk(["kitchen": -85, "living": -55])
            // Requests all through the handover, to the strap and to the bridge: each answered once by the site.
            var sent = 0
            while site.presence != "living", ContinuousClock.now - walked < .seconds(60) {
                try await MosquittoClients.publish(port: site.broker.port, topic: "\(site.base)/strap/request/refresh",
                                                   message: "{\"transaction\":\"r\(sent)\"}")
                try await MosquittoClients.publish(port: site.broker.port, topic: "\(site.base)/bridge/request/health_check",
                                                   message: "{\"transaction\":\"h\(sent)\"}")
                sent += 1
            }
            #expect(site.presence == "living")
            let handover = ContinuousClock.now - walked
            // The kitchen stopped publishing before it handed over: samples from here on are the living room's.
            let samplesAtHandover = site.payloads("strap/sensor/heart_rate").count
            #expect(await eventually(timeout: .seconds(30), interval: .milliseconds(20)) {
                site.payloads("strap/sensor/heart_rate").count > samplesAtHandover
            })
            let flowing = ContinuousClock.now - walked
            print("figure: handover \(Self.seconds(handover)) s after the strap became 30 dB stronger in the next room, "
                  + "samples again after \(Self.seconds(flowing)) s (target ≤ 10 s)")
            #expect(site.owners == ["kitchen", "living"])
            func transactions(_ topic: String) -> [String] { site.payloads(topic).compactMap { site.json($0)?["transaction"] as? String } }
            #expect(await eventually(timeout: .seconds(30)) {
                transactions("strap/response/refresh").count >= sent && transactions("bridge/response/health_check").count >= sent
            })
            try await Task.sleep(for: .seconds(1))
            for (topic, prefix) in [("strap/response/refresh", "r"), ("bridge/response/health_check", "h")] {
                let answered = transactions(topic)
                #expect(answered.sorted() == (0..<sent).map { "\(prefix)\($0)" }.sorted(), "\(topic): \(answered.count) answers to \(sent)")
            }
            print("figure: \(sent) device and \(sent) bridge requests during the handover, each answered once")

            // The bedroom now hears the strap better than the kitchen (the living room, its owner, best of all); once
            // the levels have settled, the living room's gateway dies.
            try await site.walk(["bedroom": -62, "kitchen": -75])
            try await Task.sleep(for: .seconds(4))
            #expect(site.owners == ["kitchen", "living"])
            let killed = ContinuousClock.now
            site.rooms["living"]!.gateway.child.signal(SIGKILL)
            #expect(await eventually(timeout: .seconds(60)) { site.presence == "bedroom" },
                    "owners: \(site.owners); presence: \(site.payloads("strap/presence"))")
            let takeover = ContinuousClock.now - killed
            let after = site.payloads("strap/sensor/heart_rate").count
            #expect(await eventually(timeout: .seconds(30), interval: .milliseconds(20)) {
                site.payloads("strap/sensor/heart_rate").count > after
            })
            let restored = ContinuousClock.now - killed
            print("figure: takeover \(Self.seconds(takeover)) s after the owner was killed, samples again after "
                  + "\(Self.seconds(restored)) s (target ≤ 15 s)")
            #expect(site.owners == ["kitchen", "living", "bedroom"])
        }
    }
}
