import DBus
import Foundation
import Testing
import Wear2MQTTTesting

/// The built `wear2mqtt` started as systemd starts a `Type=notify` unit with `WatchdogSec=`: a `NOTIFY_SOCKET` (here
/// a datagram socket in the test's directory that keeps what arrives) and `WATCHDOG_USEC`. Every wait below ends on a
/// message; its timeout only keeps a broken gateway from hanging the run.
@Suite struct SystemdNotifyEndToEndTests {
    static let strap = "C0:FF:EE:00:00:51"
    static let watchdog = ["WATCHDOG_USEC": "400000"]

    /// A configuration for a broker on `port` and BlueZ on `bus`.
    static func configuration(_ directory: TemporaryDirectory, port: Int, bus: String, devices: String = "") throws -> String {
        try directory.write("gateway.yaml", GatewayProcess.configuration(
            port: port, stateDirectory: directory.file("state"), baseTopic: "notify/\(UUID().uuidString.prefix(8))",
            extra: "bluez:\n  bus: \(bus)" + (devices.isEmpty ? "" : "\ndevices:\n" + devices)))
    }

    static func count(_ assignment: String, in assignments: [String]) -> Int { assignments.filter { $0 == assignment }.count }

    @Test("READY=1 waits for the broker; STATUS names the broker and the devices; WATCHDOG=1 keeps coming; STOPPING=1 on SIGTERM")
    func readinessStatusWatchdogAndStopping() async throws {
        let broker = try MosquittoBroker()          // its port is chosen; it starts later
        let daemon = try await DBusDaemon()
        let scenario = try daemon.directory.write("scenario.yaml", """
        seed: 5
        adapter:
          address: "00:1A:7D:DA:71:51"
        devices:
          - kind: heart_rate_strap
            address: \(Self.strap)
            advertising_interval: 100ms
            options: { rate_hz: 1 }
        """)
        let simulatorPath = URL(fileURLWithPath: GatewayProcess.executablePath).deletingLastPathComponent()
            .appendingPathComponent("wear2mqtt-sim").path
        let simulator = try ChildProcess(executable: simulatorPath,
                                         arguments: ["run", "--bus", daemon.address, "--scenario", scenario],
                                         outputPath: daemon.directory.file("sim.out"), errorPath: daemon.directory.file("sim.err"))
        let listener = try NotifySocketListener(path: broker.directory.file("notify.sock"))
        let config = try Self.configuration(broker.directory, port: broker.port, bus: daemon.address,
                                            devices: "  - address: \(Self.strap)\n    name: strap")
        let gateway = try GatewayProcess.start(arguments: ["run", "--config", config], in: broker.directory,
                                               environment: Self.watchdog.merging(["NOTIFY_SOCKET": listener.notifySocket]) { $1 })
        defer { gateway.child.signal(SIGKILL) }

        // No broker yet: the watchdog is pinged and the status says so, but start-up is not over.
        #expect(await listener.waitUntil { Self.count("WATCHDOG=1", in: $0) >= 3 && $0.contains { $0.hasPrefix("STATUS=broker connecting") } })
        #expect(!listener.assignments.contains("READY=1"))

        // The broker comes: READY=1, after a status that says it is connected.
        try await broker.start()
        #expect(await listener.waitUntil { $0.contains("READY=1") })
        let untilReady = listener.assignments.prefix { $0 != "READY=1" }
        #expect(untilReady.last?.hasPrefix("STATUS=broker connected") == true, "\(untilReady)")

        // The strap connects: the status counts it.
        #expect(await listener.waitUntil { $0.contains("STATUS=broker connected, 1/1 devices connected") },
                "\(listener.assignments.filter { $0.hasPrefix("STATUS=") })")
        #expect(Self.count("READY=1", in: listener.assignments) == 1)
        // The status is sent when it changes, not with every look at it.
        let statuses = listener.assignments.filter { $0.hasPrefix("STATUS=") }
        #expect(zip(statuses, statuses.dropFirst()).allSatisfy { $0 != $1 }, "\(statuses)")

        // The pings keep coming.
        let pings = Self.count("WATCHDOG=1", in: listener.assignments)
        #expect(await listener.waitUntil { Self.count("WATCHDOG=1", in: $0) >= pings + 3 })

        // SIGTERM: STOPPING=1, and the process ends.
        gateway.child.signal(SIGTERM)
        #expect(await listener.waitUntil { $0.contains("STOPPING=1") })
        #expect(await gateway.child.waitForExit(timeout: .seconds(30)) == 0)
        #expect(Self.count("READY=1", in: listener.assignments) == 1)

        await simulator.stop()
        await daemon.stop()
        await broker.remove()
    }

    @Test("a stalled data-path loop stops the watchdog pings while the process lives on")
    func stalledLoopStopsThePings() async throws {
        let directory = try TemporaryDirectory(prefix: "notify")
        defer { directory.remove() }
        let daemon = try await DBusDaemon()
        let listener = try NotifySocketListener.abstract()
        let config = try Self.configuration(directory, port: try FreePort.loopback(), bus: daemon.address)
        let gateway = try GatewayProcess.start(arguments: ["run", "--config", config], in: directory, environment: Self.watchdog.merging([
            "NOTIFY_SOCKET": listener.notifySocket, "WEAR2MQTT_DEBUG_STALL_DATA_PATH_AFTER_S": "3",
        ]) { $1 })
        defer { gateway.child.signal(SIGKILL) }

        #expect(await listener.waitUntil { Self.count("WATCHDOG=1", in: $0) >= 2 })
        // Written by the loop thread as it stalls: no ping can be sent after it.
        #expect(try await gateway.child.waitForErrorOutput(timeout: .seconds(60)) { $0.contains("the data-path loop stalls now") })
        let pings = Self.count("WATCHDOG=1", in: listener.assignments)
        // Ten ping intervals (WATCHDOG_USEC/2 = 200 ms each) of silence; the status task, off the loop, still runs.
        // Slept: the silence is the point, and nothing marks time in a process whose loop is stalled (no broker, no
        // device; its status is sent only when it changes).
        try await Task.sleep(for: .seconds(2))
        #expect(Self.count("WATCHDOG=1", in: listener.assignments) == pings)
        #expect(gateway.child.isRunning)

        gateway.child.signal(SIGKILL)
        await gateway.child.waitForExit()
        await daemon.stop()
    }
}
