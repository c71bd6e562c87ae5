import Foundation
import Simulator
import Testing
import Wear2MQTTTesting

/// Bose Frames over the whole product: the simulator serves the documented 0xFDD2 service, the gateway's
/// Bose driver configures it from MQTT and publishes its IMU streams and gestures.
@Suite(.timeLimit(.minutes(4)))
struct BoseWearableEndToEndTests {
    static let frames = "B0:5E:00:00:00:01"
    static let silentFrames = "B0:5E:00:00:00:02"

    static let scenarioDevices = """
      - kind: bose_frames
        address: \(frames)
        advertising_interval: 100ms
        options: { gestures: "double_tap@6,double_tap@12,double_tap@18" }
      - kind: bose_frames
        address: \(silentFrames)
        advertising_interval: 100ms
        options: { confirm_configuration: false }
    """

    static let configuredDevices = """
      - address: \(frames)
        name: frames
      - address: \(silentFrames)
        name: silent
    """

    /// The payloads on `topic` decoded, those with a `ts`.
    func samples(_ stack: Stack, _ topic: String) -> [[String: Any]] {
        stack.payloads(topic).compactMap(stack.json).filter { $0["ts"] != nil }
    }

    /// The response to the request sent with `transaction`.
    func response(_ stack: Stack, _ device: String, _ command: String, transaction: String) async -> [String: Any]? {
        var found: [String: Any]?
        _ = await eventually(timeout: .seconds(30)) {
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
            #expect(await eventually(timeout: .seconds(45)) {
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
            #expect(await eventually(timeout: .seconds(30)) {
                samples(stack, "frames/sensor/accelerometer").count >= 250 && samples(stack, "frames/sensor/gyroscope").count >= 250
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
            #expect(await eventually(timeout: .seconds(30)) {
                stack.payloads("frames/gesture").compactMap(stack.json).contains { $0["gesture"] as? String == "double_tap" }
            })
            let enabled = try #require(stack.payloads("frames").last.flatMap(stack.json))
            #expect(sensorState(enabled, "accelerometer") == (true, 20))
            #expect((enabled["gestures"] as? [String: Bool])?["double_tap"] == true)

            // The link drops and comes back: the device forgot everything, the gateway configures it again by
            // itself, and samples resume with no new request.
            try await stack.control.dropLink(Self.frames)
            #expect(await eventually(timeout: .seconds(30)) { stack.payloads("frames/availability").last == #"{"state":"offline"}"# })
            let before = samples(stack, "frames/sensor/gyroscope").count
            #expect(await eventually(timeout: .seconds(45)) { stack.payloads("frames/availability").last == #"{"state":"online"}"# })
            #expect(await eventually(timeout: .seconds(30)) {
                samples(stack, "frames/sensor/gyroscope").count >= before + 100
                    && samples(stack, "frames/sensor/accelerometer").count >= before + 100
            })
            let resumed = Array(samples(stack, "frames/sensor/accelerometer").suffix(60))
            #expect((45...55).contains(rate(resumed)), "after the reconnect: \(rate(resumed)) samples/s")
            #expect(stack.payloads("frames/response/configure").count == 1, "no new request was needed")
            let after = try #require(stack.payloads("frames").last.flatMap(stack.json))
            #expect(sensorState(after, "gyroscope") == (true, 20))
        }
    }

    @Test func badConfigurationsAreRefusedBeforeAnyWriteAndTheDevicesRefusalIsReported() async throws {
        try await Stack.with(scenarioDevices: Self.scenarioDevices, configuredDevices: Self.configuredDevices) { stack in
            #expect(await eventually(timeout: .seconds(45)) {
                stack.payloads("frames").last.flatMap(stack.json)?["capabilities"] != nil
                    && stack.payloads("silent").last.flatMap(stack.json)?["capabilities"] != nil
            })
            try await stack.request("frames/request/configure", #"{"sensors":{"accelerometer":{"period_ms":40}},"transaction":"good"}"#)
            #expect(await response(stack, "frames", "configure", transaction: "good")?["status"] as? String == "ok")
            let written = try await stack.control.received(Self.frames, characteristic: "5af38af6-000e-404b-9b46-07f77580890b").count

            let refused: [(String, String, String)] = [
                ("period", #"{"sensors":{"accelerometer":{"period_ms":30}}}"#, "sensors.accelerometer.period_ms"),
                ("two_periods", #"{"sensors":{"gyroscope":{"period_ms":20}}}"#, "sensors"),
                ("too_many", #"{"sensors":{"gyroscope":{"period_ms":40},"rotation":{"period_ms":40},"magnetometer":{"period_ms":40}}}"#, "sensors"),
                ("unknown_sensor", #"{"sensors":{"heart_rate":{"period_ms":40}}}"#, "sensors.heart_rate"),
                ("wrong_type", #"{"sensors":{"accelerometer":{"period_ms":"fast"}}}"#, "sensors.accelerometer.period_ms"),
                ("unknown_gesture", #"{"gestures":{"wink":true}}"#, "gestures.wink"),
                ("unknown_field", #"{"raw_stream":true}"#, "raw_stream"),
            ]
            for (transaction, body, field) in refused {
                let payload = String(body.dropLast()) + #","transaction":"\#(transaction)"}"#
                try await stack.request("frames/request/configure", payload)
                let answer = await response(stack, "frames", "configure", transaction: transaction)
                let error = answer?["error"] as? [String: Any]
                #expect(answer?["status"] as? String == "error", "\(transaction): \(String(describing: answer))")
                #expect(error?["code"] as? String == "INVALID_VALUE", "\(transaction)")
                #expect((error?["message"] as? String)?.hasPrefix(field + ":") == true, "\(transaction): \(String(describing: error))")
            }
            try await stack.request("frames/request/configure", #"{"sensors":{"#)
            #expect(await eventually { stack.payloads("frames/response/configure").contains { $0.contains("INVALID_PAYLOAD") } })
            try await stack.request("nobody/request/configure", #"{"sensors":{},"transaction":"nobody"}"#)
            #expect((await response(stack, "nobody", "configure", transaction: "nobody")?["error"] as? [String: Any])?["code"] as? String == "DEVICE_NOT_FOUND")

            // Nothing was written for any of them, and the accelerometer still streams at 40 ms.
            #expect(try await stack.control.received(Self.frames, characteristic: "5af38af6-000e-404b-9b46-07f77580890b").count == written)
            let state = try #require(stack.payloads("frames").last.flatMap(stack.json))
            #expect(sensorState(state, "accelerometer") == (true, 40))
            let count = samples(stack, "frames/sensor/accelerometer").count
            #expect(await eventually { samples(stack, "frames/sensor/accelerometer").count > count + 20 })

            // The device refuses a write (the SDK's didFailToWriteSensorConfiguration): an error with its ATT code.
            try await stack.control.failNextCall(Self.frames, method: "WriteValue", error: "Failed: Operation failed with ATT error: 0x81")
            try await stack.request("frames/request/configure", #"{"sensors":{"accelerometer":{"period_ms":80}},"transaction":"rejected"}"#)
            let rejected = await response(stack, "frames", "configure", transaction: "rejected")?["error"] as? [String: Any]
            #expect(rejected?["code"] as? String == "INVALID_VALUE")
            #expect(rejected?["vendor_code"] as? Int == 0x81)

            // A device that accepts the write but never notifies the new configuration: TIMEOUT, not ok.
            try await stack.request("silent/request/configure", #"{"sensors":{"accelerometer":{"period_ms":20}},"transaction":"quiet"}"#)
            let quiet = await response(stack, "silent", "configure", transaction: "quiet")?["error"] as? [String: Any]
            #expect(quiet?["code"] as? String == "TIMEOUT", "\(String(describing: quiet))")
        }
    }

    @Test func aDeviceAddedOverMQTTWithoutScanningGetsTheBoseDriverFromItsAdvertisement() async throws {
        try await Stack.with(scenarioDevices: Self.scenarioDevices, configuredDevices: nil) { stack in
            #expect(await eventually { stack.payloads("bridge/state").last?.contains("online") == true })
            try await stack.request("bridge/request/device/add", #"{"address":"\#(Self.frames)","transaction":"add"}"#)
            let answer = try #require(await response(stack, "bridge", "device/add", transaction: "add"))
            let data = answer["data"] as? [String: Any]
            #expect(data?["driver"] as? String == "bose", "\(answer)")
            #expect(data?["id"] as? String == "bose_b05e00000001")
            #expect(await eventually(timeout: .seconds(45)) {
                stack.payloads("bose_b05e00000001").last.flatMap(stack.json)?["capabilities"] != nil
            })
        }
    }

    @Test func theConfigurationFileAppliesOnConnectAndARequestOutlivesAGatewayRestart() async throws {
        let configured = """
          - address: \(Self.frames)
            name: frames
            configure:
              sensors: { accelerometer: { period_ms: 40 } }
              gestures: { double_tap: true }
        """
        try await Stack.with(scenarioDevices: Self.scenarioDevices, configuredDevices: configured) { stack in

            // devices[].configure: the accelerometer streams at 25 samples/s with no request at all.
            #expect(await eventually(timeout: .seconds(45)) { samples(stack, "frames/sensor/accelerometer").count >= 60 })
            #expect((23...27).contains(rate(samples(stack, "frames/sensor/accelerometer"))))
            #expect(await eventually { stack.payloads("frames").last.flatMap(stack.json).map { sensorState($0, "accelerometer") == (true, 40) } == true })
            #expect((stack.payloads("frames").last.flatMap(stack.json)?["gestures"] as? [String: Bool])?["double_tap"] == true)

            // A request replaces it...
            try await stack.request("frames/request/configure",
                                    #"{"sensors":{"accelerometer":{"enabled":false},"gyroscope":{"period_ms":80}},"transaction":"swap"}"#)
            #expect(await response(stack, "frames", "configure", transaction: "swap")?["status"] as? String == "ok")
            let sensorConfiguration = "5af38af6-000e-404b-9b46-07f77580890b"
            let writesBefore = try await stack.control.received(Self.frames, characteristic: sensorConfiguration).count

            // ...and outlives a restart of the gateway: the device is let go on shutdown, forgets everything, and
            // the new gateway writes the requested configuration again (from state_dir/devices.json).
            try await stack.restartGateway()
            #expect(await eventually(timeout: .seconds(45)) {
                (try? await stack.control.received(Self.frames, characteristic: sensorConfiguration).count) ?? 0 > writesBefore
            })
            let written = try await stack.control.received(Self.frames, characteristic: sensorConfiguration).last ?? []
            let periods = Dictionary((try BoseSensorConfigurationBytes.entries(written)), uniquingKeysWith: { $1 })
            #expect(periods[0] == 0 && periods[1] == 80, "accelerometer off, gyroscope at 80 ms: \(written)")
            let gyroscopeBefore = samples(stack, "frames/sensor/gyroscope").count
            #expect(await eventually(timeout: .seconds(30)) { samples(stack, "frames/sensor/gyroscope").count >= gyroscopeBefore + 20 })
        }
    }
}

/// Reads `[id u8][period u16 BE]` entries, the SensorConfiguration layout, without the gateway's code.
enum BoseSensorConfigurationBytes {
    struct Malformed: Error {}

    static func entries(_ bytes: [UInt8]) throws -> [(UInt8, Int)] {
        guard bytes.count % 3 == 0 else { throw Malformed() }
        return stride(from: 0, to: bytes.count, by: 3).map { (bytes[$0], Int(bytes[$0 + 1]) << 8 | Int(bytes[$0 + 2])) }
    }
}
