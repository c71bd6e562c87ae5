import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Wear2MQTTTesting

/// `GET /health` of the built `wear2mqtt` (what the container's health check and the add-on's watchdog ask): 200 while
/// the data-path loop beats, 503 once that loop stalls while the process and its HTTP server live on. Every wait ends
/// on an answer; its limit only keeps a broken gateway from hanging the run.
@Suite struct HealthEndpointEndToEndTests {
    /// The status `/health` answers now, nil while nothing listens.
    static func status(_ url: URL) async -> Int? {
        var request = URLRequest(url: url)
        request.timeoutInterval = 5
        guard let (_, response) = try? await URLSession.shared.data(for: request) else { return nil }
        return (response as? HTTPURLResponse)?.statusCode
    }

    /// Asks every 100 ms until `/health` answers `expected`; false after `seconds`.
    static func waitFor(_ expected: Int, at url: URL, seconds: Int) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if await status(url) == expected { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    @Test("/health answers 200 while the data-path loop turns and 503 after it stalls, with the process alive")
    func stalledLoopTurnsHealthUnavailable() async throws {
        let directory = try TemporaryDirectory(prefix: "health")
        defer { directory.remove() }
        let daemon = try await DBusDaemon()
        let webPort = try FreePort.loopback()
        let config = try directory.write("gateway.yaml", GatewayProcess.configuration(
            port: try FreePort.loopback(), stateDirectory: directory.file("state"), baseTopic: "health/\(UUID().uuidString.prefix(8))",
            extra: "bluez:\n  bus: \(daemon.address)\nfrontend:\n  enabled: true\n  listen: 127.0.0.1:\(webPort)"))
        let gateway = try GatewayProcess.start(arguments: ["run", "--config", config], in: directory,
                                               environment: ["WEAR2MQTT_DEBUG_STALL_DATA_PATH_AFTER_S": "4"])
        defer { gateway.child.signal(SIGKILL) }
        let url = try #require(URL(string: "http://127.0.0.1:\(webPort)/health"))

        // Without a broker the gateway is still healthy: the loop turns.
        #expect(await Self.waitFor(200, at: url, seconds: 60))
        #expect(try await gateway.child.waitForErrorOutput(timeout: .seconds(60)) { $0.contains("the data-path loop stalls now") })
        // The heartbeat counts a loop stalled after 10 s without a beat.
        #expect(await Self.waitFor(503, at: url, seconds: 60))
        #expect(gateway.child.isRunning)

        gateway.child.signal(SIGKILL)
        await gateway.child.waitForExit()
        await daemon.stop()
    }
}
