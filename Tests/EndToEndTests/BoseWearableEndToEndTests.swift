import Foundation
import Simulator
import Testing
import Wear2MQTTTesting

/// Bose Frames over the whole product: the simulator serves the documented 0xFDD2 service, the gateway's
/// Bose driver configures it from MQTT and publishes its IMU streams at their rate and its gestures, across a
/// dropped link. Refusals, the driver chosen from the advertisement and restarts are tested in memory
/// (Tests/GatewayTests/InMemory/BoseGatewayTests.swift).
@Suite(.timeLimit(.minutes(4)))
struct BoseWearableEndToEndTests {
    static let frames = "B0:5E:00:00:00:01"

    static let scenarioDevices = """
      - kind: bose_frames
        address: \(frames)
        advertising_interval: 100ms
        options: { gestures: "double_tap@6,double_tap@12,double_tap@18" }
    """

    static let configuredDevices = """
      - address: \(frames)
        name: frames
    """

    /// The payloads on `topic` decoded, those with a `ts`.
    func samples(_ stack: Stack, _ topic: String) -> [[String: Any]] {
        stack.payloads(topic).compactMap(stack.json).filter { $0["ts"] != nil }
    }

    /// At least `count` samples on `topic`. Counted on the payloads first, which are at least as many: a wait
    /// re-checked at each of 100 messages a second decodes them only once there can be enough.
    func hasSamples(_ stack: Stack, _ topic: String, _ count: Int) -> Bool {
        stack.payloads(topic).count >= count && samples(stack, topic).count >= count
    }

    /// The response to the request sent with `transaction`.
    func response(_ stack: Stack, _ device: String, _ command: String, transaction: String) async -> [String: Any]? {
        var found: [String: Any]?
        _ = await stack.until(timeout: .seconds(30)) {
            found = stack.payloads("\(device)/response/\(command)").compactMap(stack.json)
                .first { $0["transaction"] as? String == transaction }
            return found != nil
        }
        return found
    }

    /// Samples per second by the samples' own timestamps: the device's 20 ms clock, not the test's timing.
    func rate(_ samples: [[String: Any]]) -> Double {
        let times = samples.compactMap { $0["ts"] as? Int64 }
        guard let first = times.first, let last = times.last, last > first else { return 0 }
        return Double(times.count - 1) * 1000 / Double(last - first)
    }

    /// `sensors.<name>` of the retained state as (enabled, period_ms).
    func sensorState(_ state: [String: Any], _ name: String) -> (enabled: Bool?, period: Int?) {
        let sensor = (state["sensors"] as? [String: Any])?[name] as? [String: Any]
        return (sensor?["enabled"] as? Bool, sensor?["period_ms"] as? Int)
    }

    func magnitude(_ sample: [String: Any]) -> Double {
        let x = sample["x"] as? Double ?? .nan, y = sample["y"] as? Double ?? .nan, z = sample["z"] as? Double ?? .nan
        return (x * x + y * y + z * z).squareRoot()
    }

    @Test func accelerometerAndGyroscopeAt20msWithDoubleTapSurviveALinkDrop() async throws {
        try await Stack.with(scenarioDevices: Self.scenarioDevices, configuredDevices: Self.configuredDevices) { stack in

            // Connected: capabilities from the three information characteristics are in the retained state.
            #expect(await stack.until(timeout: .seconds(45)) {
                stack.payloads("frames").last.flatMap(stack.json)?["capabilities"] != nil
            })
            let state = try #require(stack.payloads("frames").last.flatMap(stack.json))
            let capabilities = try #require(state["capabilities"] as? [String: Any])
            #expect((capabilities["sensors"] as? [String: Any])?["accelerometer"] != nil)
            #expect((capabilities["gestures"] as? [String])?.contains("double_tap") == true)
            #expect(capabilities["max_active_sensors"] as? Int == 3)
            #expect(state["device_status"] != nil)

            // The SDK's own example: accelerometer and gyroscope at 20 ms, double tap on.
            try await stack.request("frames/request/configure", """
            {"sensors":{"accelerometer":{"period_ms":20},"gyroscope":{"period_ms":20}},"gestures":{"double_tap":true},"transaction":"t1"}
            """)
            let answer = try #require(await response(stack, "frames", "configure", transaction: "t1"))
            #expect(answer["status"] as? String == "ok", "\(answer)")
            let data = try #require(answer["data"] as? [String: Any])
            #expect((data["sensors"] as? [String: Any])?["accelerometer"] as? [String: Int] == ["period_ms": 20])
            #expect((data["sensors"] as? [String: Any])?["rotation"] as? [String: Int] == ["period_ms": 0])

            // About 50 samples a second on each topic, scaled, with increasing timestamps.
            #expect(await stack.until(timeout: .seconds(30)) {
                hasSamples(stack, "frames/sensor/accelerometer", 250) && hasSamples(stack, "frames/sensor/gyroscope", 250)
            })
            for sensor in ["accelerometer", "gyroscope"] {
                let received = samples(stack, "frames/sensor/\(sensor)")
                #expect((45...55).contains(rate(received)), "\(sensor): \(rate(received)) samples/s")
                let times = received.compactMap { $0["ts"] as? Int64 }
                #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "\(sensor) timestamps must increase")
                #expect(abs((times.last ?? 0) - Int64(Date().timeIntervalSince1970 * 1000)) < 10_000, "timestamps are Unix ms")
                #expect(received.allSatisfy { ["unreliable", "low", "medium", "high"].contains($0["accuracy"] as? String ?? "") })
            }
            let gravity = samples(stack, "frames/sensor/accelerometer").map(magnitude)
            let meanGravity = gravity.reduce(0, +) / Double(gravity.count)
            #expect((0.9...1.1).contains(meanGravity), "mean acceleration \(meanGravity) g should be near 1 g (gravity)")
            #expect(samples(stack, "frames/sensor/rotation").isEmpty, "only the configured sensors stream")

            // The scripted double tap arrives on `gesture`.
            #expect(await stack.until(timeout: .seconds(30)) {
                stack.payloads("frames/gesture").compactMap(stack.json).contains { $0["gesture"] as? String == "double_tap" }
            })
            let enabled = try #require(stack.payloads("frames").last.flatMap(stack.json))
            #expect(sensorState(enabled, "accelerometer") == (true, 20))
            #expect((enabled["gestures"] as? [String: Bool])?["double_tap"] == true)

            // The link drops and comes back: the device forgot everything, the gateway configures it again by
            // itself, and samples resume with no new request.
            // Offline is looked for among what came after the drop, not as the last message: the gateway may be
            // back online before a look.
            let availabilityBefore = stack.payloads("frames/availability").count
            try await stack.control.dropLink(Self.frames)
            #expect(await stack.until(timeout: .seconds(30)) {
                stack.payloads("frames/availability").dropFirst(availabilityBefore).contains(#"{"state":"offline"}"#)
            })
            let before = samples(stack, "frames/sensor/gyroscope").count
            #expect(await stack.until(timeout: .seconds(45)) { stack.payloads("frames/availability").last == #"{"state":"online"}"# })
            #expect(await stack.until(timeout: .seconds(30)) {
                hasSamples(stack, "frames/sensor/gyroscope", before + 100) && hasSamples(stack, "frames/sensor/accelerometer", before + 100)
            })
            let resumed = Array(samples(stack, "frames/sensor/accelerometer").suffix(60))
            #expect((45...55).contains(rate(resumed)), "after the reconnect: \(rate(resumed)) samples/s")
            #expect(stack.payloads("frames/response/configure").count == 1, "no new request was needed")
            let after = try #require(stack.payloads("frames").last.flatMap(stack.json))
            #expect(sensorState(after, "gyroscope") == (true, 20))
        }
    }
}
