import DBus
import Foundation
import MQTT
import Simulator
import Synchronization
import Testing
import Wear2MQTTTesting

/// The whole product for one test: a real mosquitto, a private D-Bus with the BlueZ simulator as a child
/// process running a scenario, the gateway as a child process, a `mosquitto_sub` witness of every topic under
/// the test's own base topic, and a control client for the simulator. Waits on what was published (`until`,
/// `response`) wake at each message a witness prints.
struct Stack {
    let broker: MosquittoBroker
    let daemon: DBusDaemon
    private(set) var simulator: ChildProcess
    private(set) var gateway: GatewayProcess
    let simulatorArguments: [String]
    let configPath: String
    let control: SimulatorControlClient
    let witness: MosquittoWitness
    /// Told of what every witness of the stack prints: the main one and those of `witness(topics:…)`.
    let changes: ChangeNotifier
    private let extraWitnesses: ExtraWitnesses
    let base: String

    /// Starts everything: `scenarioDevices` is the `devices:` list of the simulator's scenario, `configuredDevices`
    /// the `devices:` list of the gateway's configuration (nil: none), both as YAML list items.
    /// `gatewayExtra` is more top-level YAML for the gateway's configuration (an `allow:` section).
    /// `stateDirectory` replaces the gateway's state folder (a small file system of the test's own); with
    /// `brokerPersistence` the broker keeps sessions and subscriptions across a kill (saved every second);
    /// `adapterLines` go into the scenario's `adapter:` section (such as `max_connections: 10`).
    static func start(scenarioDevices: String, configuredDevices: String?, gatewayExtra: String = "",
                      stateDirectory: String? = nil, brokerPersistence: Bool = false,
                      adapterLines: [String] = [], keepaliveSeconds: Int = 5) async throws -> Stack {
        let base = "sim/\(UUID().uuidString.prefix(8))"
        let broker = try MosquittoBroker(persistence: brokerPersistence)
        try await broker.start()
        let daemon = try await DBusDaemon()
        let scenario = try daemon.directory.write("scenario.yaml", """
        seed: 11
        adapter:
          address: "00:1A:7D:DA:71:13"
        \(adapterLines.map { "  " + $0 + "\n" }.joined())devices:
        \(scenarioDevices)
        """)
        let simulatorPath = URL(fileURLWithPath: GatewayProcess.executablePath).deletingLastPathComponent()
            .appendingPathComponent("wear2mqtt-sim").path
        let simulatorArguments = [simulatorPath, "run", "--bus", daemon.address, "--scenario", scenario]
        let simulator = try ChildProcess(executable: simulatorPath, arguments: Array(simulatorArguments.dropFirst()),
                                         outputPath: daemon.directory.file("sim.out"), errorPath: daemon.directory.file("sim.err"))
        let control = SimulatorControlClient(bus: try BusConnection(.address(daemon.address)))
        let witness = try MosquittoWitness(port: broker.port, topics: ["\(base)/#"], arguments: ["-V", "5"],
                                           directory: broker.directory, name: "witness")
        let changes = ChangeNotifier()
        witness.changes.forward(to: changes)
        let config = try broker.directory.write("gateway.yaml", GatewayProcess.configuration(
            port: broker.port, stateDirectory: stateDirectory ?? broker.directory.file("state"), baseTopic: base,
            keepaliveSeconds: keepaliveSeconds, extra: """
            bluez:
              bus: \(daemon.address)
            """ + (configuredDevices.map { "\ndevices:\n" + $0 } ?? "") + (gatewayExtra.isEmpty ? "" : "\n" + gatewayExtra)))
        let gateway = try GatewayProcess.start(arguments: ["run", "--config", config], in: broker.directory)
        // The simulator starts beside the gateway; a test's first control call must not race its bus name (when it
        // is not there, the call's own error says so).
        _ = await control.untilServing()
        return Stack(broker: broker, daemon: daemon, simulator: simulator, gateway: gateway,
                     simulatorArguments: simulatorArguments, configPath: config, control: control, witness: witness,
                     changes: changes, extraWitnesses: ExtraWitnesses(), base: base)
    }

    /// Every message the witness saw on `topic` (under the base), payloads only, in order.
    func payloads(_ topic: String) -> [String] { witness.payloads("\(base)/\(topic)") }

    /// True as soon as `condition` holds, checked now and after each message a witness of the stack prints; false
    /// if it still does not after `timeout` (a failure guard in real time, as long as `eventually`'s was).
    func until(timeout: Duration = .seconds(20), _ condition: () async throws -> Bool) async rethrows -> Bool {
        try await changes.until(timeout: timeout, condition)
    }

    /// Another witness on the stack's broker (`arguments` such as a persistent session's), waking `until` too and
    /// stopped with the stack.
    func witness(topics: [String], arguments: [String] = [], name: String) throws -> MosquittoWitness {
        let witness = try MosquittoWitness(port: broker.port, topics: topics, arguments: arguments, directory: broker.directory, name: name)
        witness.changes.forward(to: changes)
        extraWitnesses.add(witness)
        return witness
    }

    /// The gateway takes requests once its `bridge/state` says online after the first `since` messages there: it
    /// subscribes to the request topics before it publishes that, on the same connection, so the broker has the
    /// subscriptions by then.
    func untilOnline(since count: Int, timeout: Duration = .seconds(45)) async -> Bool {
        await until(timeout: timeout) { payloads("bridge/state").dropFirst(count).contains(#"{"state":"online"}"#) }
    }

    /// A retained message removed by an empty payload (mosquitto_sub prints it as "(null)").
    static func isCleared(_ payload: String?) -> Bool { payload == "" || payload == "(null)" }

    /// Durable record payloads grouped by their `id`: one entry per record, every distinct payload a repeat of it
    /// carried. A payload without an id is recorded as an issue.
    func recordsByID(_ payloads: [String]) -> [String: Set<String>] {
        var byID: [String: Set<String>] = [:]
        for payload in payloads {
            guard let id = json(payload)?["id"] as? String else {
                Issue.record("a record without an id: \(payload)")
                continue
            }
            byID[id, default: []].insert(payload)
        }
        return byID
    }

    func json(_ text: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }

    func request(_ topic: String, _ payload: String) async throws {
        try await MosquittoClients.publish(port: broker.port, topic: "\(base)/\(topic)", message: payload)
    }

    /// The response on `topic` to the request sent with `transaction`, nil when none came within `timeout`.
    func response(_ topic: String, transaction: String, timeout: Duration = .seconds(60)) async -> [String: Any]? {
        var found: [String: Any]?
        _ = await until(timeout: timeout) {
            found = payloads(topic).compactMap(json).first { $0["transaction"] as? String == transaction }
            return found != nil
        }
        return found
    }

    /// A device request sent as a client would right after the device reconnects: again, with a new transaction,
    /// while the answer is `BUSY` (its session still starting). The last answer, nil when none came within `timeout`.
    /// A session that answered `BUSY` says it has started with a new state of the device (`<id>`), which it
    /// publishes after the answer: the next try waits for one.
    func requestWhenReady(_ id: String, _ command: String, _ fields: String = "", timeout: Duration = .seconds(60)) async throws -> [String: Any]? {
        let deadline = ContinuousClock.now + timeout
        var attempt = 0
        while true {
            attempt += 1
            let transaction = "\(command)-ready-\(attempt)"
            let states = payloads(id).count
            try await request("\(id)/request/\(command)", "{\"transaction\":\"\(transaction)\"\(fields.isEmpty ? "" : "," + fields)}")
            let answer = await response("\(id)/response/\(command)", transaction: transaction, timeout: max(.seconds(1), deadline - .now))
            guard Self.error(answer).code == "BUSY", ContinuousClock.now < deadline else { return answer }
            _ = await until(timeout: max(.seconds(1), deadline - .now)) { payloads(id).count > states }
        }
    }

    /// The error code and vendor code of an error response.
    static func error(_ response: [String: Any]?) -> (code: String?, vendor: Int?) {
        let error = response?["error"] as? [String: Any]
        return (error?["code"] as? String, error?["vendor_code"] as? Int)
    }

    /// The last payload on `topic` as JSON (a device's retained state).
    func last(_ topic: String) -> [String: Any]? { payloads(topic).last.flatMap(json) }

    /// Starts the stack, runs `body` and stops every process by pid afterwards — also when `body` throws (a
    /// failed `#require`), which a `defer` could not await.
    static func with(scenarioDevices: String, configuredDevices: String?, gatewayExtra: String = "",
                     stateDirectory: String? = nil, brokerPersistence: Bool = false, adapterLines: [String] = [],
                     keepaliveSeconds: Int = 5, _ body: (inout Stack) async throws -> Void) async throws {
        var stack = try await start(scenarioDevices: scenarioDevices, configuredDevices: configuredDevices,
                                    gatewayExtra: gatewayExtra, stateDirectory: stateDirectory,
                                    brokerPersistence: brokerPersistence, adapterLines: adapterLines,
                                    keepaliveSeconds: keepaliveSeconds)
        do {
            try await body(&stack)
        } catch {
            await stack.stop()
            throw error
        }
        await stack.stop()
    }

    /// Stops the gateway gracefully (SIGTERM) and starts it again with the same configuration and state.
    mutating func restartGateway() async throws {
        await gateway.child.stop()
        gateway = try GatewayProcess.start(arguments: ["run", "--config", configPath], in: broker.directory, name: "gateway-2")
    }

    /// Kills the gateway with SIGKILL (no goodbye, no flush) and starts it again with the same configuration and state.
    mutating func killAndRestartGateway() async throws {
        gateway.child.signal(SIGKILL)
        _ = await gateway.child.waitForExit(timeout: .seconds(30))
        gateway = try GatewayProcess.start(arguments: ["run", "--config", configPath], in: broker.directory, name: "gateway-killed")
    }

    /// Kills the simulator (the process owning `org.bluez`) with SIGKILL and starts it again with the same scenario:
    /// bluetoothd crashing and systemd restarting it.
    mutating func killAndRestartSimulator() async throws {
        simulator.signal(SIGKILL)
        _ = await simulator.waitForExit(timeout: .seconds(30))
        simulator = try ChildProcess(executable: simulatorArguments[0], arguments: Array(simulatorArguments.dropFirst()),
                                     outputPath: daemon.directory.file("sim-2.out"), errorPath: daemon.directory.file("sim-2.err"))
        _ = await control.untilServing()
    }

    /// Every message `witness` saw on `topic` under the base, payloads only, in order.
    func payloads(_ topic: String, seenBy witness: MosquittoWitness) -> [String] { witness.payloads("\(base)/\(topic)") }

    func stop() async {
        await gateway.child.stop()
        await witness.stop()
        await extraWitnesses.stop()
        control.bus.close()
        await simulator.stop()
        await daemon.stop()
        await broker.remove()
    }
}

/// The distinct `id`s among durable records, each payload decoded once: a wait re-checked at every message of a
/// sync of thousands of records reads only what arrived since its last look.
struct RecordIDs {
    private var decoded: [String: Int] = [:]
    private(set) var ids: Set<String> = []

    /// Takes the ids of `payloads` that `source` (a topic as one witness saw it, whose payloads only grow) has
    /// added since the last call.
    mutating func read(_ payloads: [String], from source: String) {
        for payload in payloads.dropFirst(decoded[source] ?? 0) {
            if let id = (try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any])?["id"] as? String {
                ids.insert(id)
            }
        }
        decoded[source] = payloads.count
    }
}

/// The witnesses a test added to its stack, stopped with it.
final class ExtraWitnesses: Sendable {
    private let witnesses = Mutex<[MosquittoWitness]>([])

    func add(_ witness: MosquittoWitness) { witnesses.withLock { $0.append(witness) } }

    func stop() async {
        for witness in witnesses.withLock({ $0 }) { await witness.stop() }
    }
}
