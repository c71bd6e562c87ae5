import Foundation
import Simulator
import Testing
import Wear2MQTTTesting

/// An ActiGraph Link over the whole product: the simulator serves the Link (standard services plus our modeled
/// vendor service, docs/protocols/actigraph.md) and the gateway's `actigraph` driver streams 30 s of raw
/// acceleration at 100 Hz through the broker without loss. Discovery by serial, the SDK's configuration JSON and
/// epoch downloads are tested in memory (Tests/GatewayTests/InMemory/ActiGraphGatewayTests.swift).
@Suite(.timeLimit(.minutes(4)))
struct ActiGraphEndToEndTests {
    static let link = "C0:A6:00:00:00:01"
    /// 2026-11-19 00:00:00 UTC: the simulated Link's last epoch ends here, so ranges in the tests are fixed.
    static let epochEnd = 1_795_046_400

    /// `options` are more YAML flow-mapping entries (`drop_after_pages: 1`).
    static func scenario(options: String = "") -> String {
        """
          - kind: actigraph_link
            address: \(link)
            advertising_interval: 100ms
            options: { epoch_end: \(epochEnd)\(options.isEmpty ? "" : ", " + options) }
        """
    }

    static let configuredDevices = """
      - address: \(link)
        name: link
    """

    func inspect(_ stack: Stack) async throws -> [String: String] { try await stack.control.inspect(Self.link) }

    func connected(_ stack: Stack, id: String = "link") async -> Bool {
        await stack.until(timeout: .seconds(45)) {
            let state = stack.last(id)
            return state?["connection"] as? String == "connected" && state?["sensors"] != nil
        }
    }

    /// `configure` with `payload` (a JSON object) and the answer.
    func configure(_ stack: Stack, _ payload: String, _ transaction: String) async throws -> [String: Any]? {
        let body = String(payload.dropLast()) + #","transaction":"\#(transaction)"}"#
        try await stack.request("link/request/configure", body)
        return await stack.response("link/response/configure", transaction: transaction)
    }

    @Test func rawAcceleration100HzFor30SecondsArrivesWithoutLoss() async throws {
        try await Stack.with(scenarioDevices: Self.scenario(), configuredDevices: Self.configuredDevices) { stack in
            #expect(await connected(stack))
            // The contract's form this time.
            let started = try await configure(stack, #"{"sensors":{"accelerometer":{"rate_hz":100}},"raw_stream":true}"#, "on")
            #expect(started?["status"] as? String == "ok")
            // 30 s of the Link's own 100 Hz: its 3,000th sample through the broker.
            #expect(await stack.until(timeout: .seconds(90)) { stack.payloads("link/sensor/accelerometer").count >= 3_000 },
                    "\(stack.payloads("link/sensor/accelerometer").count) samples")
            let stopped = try await configure(stack, #"{"raw":{"stream":false}}"#, "off")
            #expect(stopped?["status"] as? String == "ok")
            let sent = Int(try await inspect(stack)["raw_samples_sent"] ?? "") ?? 0
            #expect(sent >= 2_500, "the Link streamed for about 30 s at 100 Hz")
            #expect(await stack.until(timeout: .seconds(10)) { stack.payloads("link/sensor/accelerometer").count >= sent })
            let samples = stack.payloads("link/sensor/accelerometer").compactMap(stack.json)
            #expect(samples.count == sent, "every sample the Link sent was published once")
            let times = samples.compactMap { $0["ts"] as? Int }
            let steps = zip(times, times.dropFirst()).map { $1 - $0 }
            #expect(steps.allSatisfy { $0 == 10 }, "the Link's own 100 Hz sample times, in order, without gaps")
            #expect(stack.last("link")?["lost_samples"] == nil)
        }
    }
}
