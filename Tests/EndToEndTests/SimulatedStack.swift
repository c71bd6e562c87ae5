import DBus
import Foundation
import MQTT
import Simulator
import Testing
import Wear2MQTTTesting

/// The whole product for one test: a real mosquitto, a private D-Bus with the BlueZ simulator as a child
/// process running a scenario, the gateway as a child process, a `mosquitto_sub` witness of every topic under
/// the test's own base topic, and a control client for the simulator.
struct Stack {
    let broker: MosquittoBroker
    let daemon: DBusDaemon
    private(set) var simulator: ChildProcess
    private(set) var gateway: GatewayProcess
    let simulatorArguments: [String]
    let configPath: String
    let control: SimulatorControlClient
    let witness: ChildProcess
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
        let witness = try MosquittoClients.subscriber(port: broker.port, topics: ["\(base)/#"], arguments: ["-V", "5"],
                                                      directory: broker.directory, name: "witness")
        let config = try broker.directory.write("gateway.yaml", GatewayProcess.configuration(
            port: broker.port, stateDirectory: stateDirectory ?? broker.directory.file("state"), baseTopic: base,
            keepaliveSeconds: keepaliveSeconds, extra: """
            bluez:
              bus: \(daemon.address)
            """ + (configuredDevices.map { "\ndevices:\n" + $0 } ?? "") + (gatewayExtra.isEmpty ? "" : "\n" + gatewayExtra)))
        let gateway = try GatewayProcess.start(arguments: ["run", "--config", config], in: broker.directory)
        return Stack(broker: broker, daemon: daemon, simulator: simulator, gateway: gateway,
                     simulatorArguments: simulatorArguments, configPath: config, control: control, witness: witness, base: base)
    }

    /// Every message the witness saw on `topic`, payloads only, in order.
    func payloads(_ topic: String) -> [String] {
        let prefix = "\(base)/\(topic) "
        return witness.output.split(separator: "\n").filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
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
        _ = await eventually(timeout: timeout) {
            found = payloads(topic).compactMap(json).first { $0["transaction"] as? String == transaction }
            return found != nil
        }
        return found
    }

    /// A device request sent as a client would right after the device reconnects: again, with a new transaction,
    /// while the answer is `BUSY` (its session still starting). The last answer, nil when none came within `timeout`.
    func requestWhenReady(_ id: String, _ command: String, _ fields: String = "", timeout: Duration = .seconds(60)) async throws -> [String: Any]? {
        let deadline = ContinuousClock.now + timeout
        var attempt = 0
        while true {
            attempt += 1
            let transaction = "\(command)-ready-\(attempt)"
            try await request("\(id)/request/\(command)", "{\"transaction\":\"\(transaction)\"\(fields.isEmpty ? "" : "," + fields)}")
            let answer = await response("\(id)/response/\(command)", transaction: transaction, timeout: max(.seconds(1), deadline - .now))
            guard Self.error(answer).code == "BUSY", ContinuousClock.now < deadline else { return answer }
            _ = await eventually(timeout: .milliseconds(200)) { false }
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
    }

    /// Every message `witness` saw on `topic` under the base, payloads only, in order.
    func payloads(_ topic: String, seenBy witness: ChildProcess) -> [String] {
        let prefix = "\(base)/\(topic) "
        return witness.output.split(separator: "\n").filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }

    func stop() async {
        await gateway.child.stop()
        await witness.stop()
        control.bus.close()
        await simulator.stop()
        await daemon.stop()
        await broker.remove()
    }
}
