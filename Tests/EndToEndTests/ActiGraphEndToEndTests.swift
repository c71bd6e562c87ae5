import Foundation
import Simulator
import Testing
import Wear2MQTTTesting

/// An ActiGraph Link over the whole product: the simulator serves the Link (standard services plus our modeled
/// vendor service, docs/protocols/actigraph.md), the gateway's `actigraph` driver finds it by serial, takes the
/// SDK's own configuration JSON, streams raw and IMU data and downloads epochs.
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

    func error(_ response: [String: Any]?) -> (code: String?, vendor: Int?) { Stack.error(response) }

    func inspect(_ stack: Stack) async throws -> [String: String] { try await stack.control.inspect(Self.link) }

    func connected(_ stack: Stack, id: String = "link") async -> Bool {
        await eventually(timeout: .seconds(45)) {
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

    @Test func scanFindsTheLinkBySerialAndConnectingTwiceIsRefused() async throws {
        try await Stack.with(scenarioDevices: Self.scenario(), configuredDevices: nil) { stack in
            // No device to wait for: wait for the gateway to be online and the simulator to answer on its bus.
            #expect(await eventually(timeout: .seconds(30)) { stack.payloads("bridge/state").last?.contains("online") == true })
            var serial = ""
            _ = await eventually(timeout: .seconds(30)) {
                serial = (try? await inspect(stack))?["serial"] ?? ""
                return !serial.isEmpty
            }
            #expect(serial.hasPrefix("TAS") && serial.count == 13)

            // The SDK's connectToDevice with a serial nobody has seen: Device Not Found, code 1.
            try await stack.request("bridge/request/device/add", #"{"serial":"TAS9Z99999999","transaction":"a0"}"#)
            let unknown = error(await stack.response("bridge/response/device/add", transaction: "a0"))
            #expect(unknown.code == "DEVICE_NOT_FOUND")
            #expect(unknown.vendor == 1)

            // enumerateDevices:duration: the Link is listed with its serial and the driver that will take it.
            try await stack.request("bridge/request/scan", #"{"duration_s":3,"transaction":"s"}"#)
            let scan = try #require(await stack.response("bridge/response/scan", transaction: "s"))
            let devices = (scan["data"] as? [String: Any])?["devices"] as? [[String: Any]] ?? []
            let found = try #require(devices.first { $0["serial"] as? String == serial })
            #expect(found["driver"] as? String == "actigraph")
            #expect(found["address"] as? String == Self.link)

            try await stack.request("bridge/request/device/add", #"{"serial":"\#(serial)","name":"link","transaction":"a1"}"#)
            let added = try #require(await stack.response("bridge/response/device/add", transaction: "a1"))
            #expect(added["status"] as? String == "ok")
            #expect((added["data"] as? [String: Any])?["driver"] as? String == "actigraph")
            #expect(await connected(stack))

            // A second connection to the connected Link: the SDK's Existing Connection Found, code 10.
            try await stack.request("bridge/request/device/add", #"{"serial":"\#(serial)","transaction":"a2"}"#)
            let again = error(await stack.response("bridge/response/device/add", transaction: "a2"))
            #expect(again.code == "INVALID_VALUE")
            #expect(again.vendor == 10)

            // getDeviceStatus: battery, firmware, serial and the epochs the Link holds.
            try await stack.request("link/request/refresh", #"{"transaction":"r"}"#)
            let status = try #require((await stack.response("link/response/refresh", transaction: "r"))?["data"] as? [String: Any])
            #expect(status["serial"] as? String == serial)
            #expect(status["firmware"] != nil)
            #expect(status["battery"] is Int)
            let epochs = try #require(status["epochs"] as? [String: Any])
            #expect((epochs["count"] as? Int ?? 0) >= 24 * 60)
            #expect(epochs["last_ts"] as? Int == (Self.epochEnd - 60) * 1000)
        }
    }

    @Test func theSDKsOwnJSONExamplesWorkAsTheyAreAndUnknownKeysChangeNothing() async throws {
        try await Stack.with(scenarioDevices: Self.scenario(), configuredDevices: Self.configuredDevices) { stack in
            #expect(await connected(stack))
            // Seed 004's RAW Configuration Request, as written there.
            let raw = try await configure(stack, #"{"raw" : {"stream": true}}"#, "raw")
            #expect(raw?["status"] as? String == "ok")
            #expect(((raw?["data"] as? [String: Any])?["raw"] as? [String: Any])?["stream"] as? Bool == true)
            #expect(await eventually(timeout: .seconds(20)) { stack.payloads("link/sensor/accelerometer").count >= 60 })
            let sample = try #require(stack.payloads("link/sensor/accelerometer").compactMap(stack.json).last)
            let magnitude = ["x", "y", "z"].map { (sample[$0] as? Double) ?? 0 }.reduce(0) { $0 + $1 * $1 }.squareRoot()
            #expect(magnitude > 0.3 && magnitude < 3, "acceleration is in g: gravity plus motion, got \(magnitude)")

            // Its IMU Configuration Request: gyroscope and temperature on, accelerometer and magnetometer off.
            let imu = try await configure(stack, #"{"imu" : {"accelerometer": false, "gyroscope": true, "magnetometer": false, "temperature": true}}"#, "imu")
            #expect(imu?["status"] as? String == "ok")
            #expect(await eventually(timeout: .seconds(20)) {
                stack.payloads("link/sensor/gyroscope").count >= 20 && stack.payloads("link/sensor/temperature").count >= 2
            })
            #expect(stack.payloads("link/sensor/magnetometer").isEmpty)
            let temperature = try #require(stack.payloads("link/sensor/temperature").compactMap(stack.json).last)
            #expect((temperature["celsius"] as? Double).map { (20...40).contains($0) } == true)
            #expect(await eventually {
                let sensors = stack.last("link")?["sensors"] as? [String: Any]
                return (sensors?["gyroscope"] as? [String: Any])?["enabled"] as? Bool == true
                    && (sensors?["magnetometer"] as? [String: Any])?["enabled"] as? Bool == false
            })

            // Its Epoch Configuration Request: a 2015 range the Link holds nothing of, answered with no epochs.
            let epoch = try await configure(stack, #"{"epoch" : {"startDateTime": "07-21-2015 04:05:00", "stopDateTime": "07-21-2015 04:06:00"}}"#, "epoch")
            #expect(epoch?["status"] as? String == "ok")
            let download = (epoch?["data"] as? [String: Any])?["epoch"] as? [String: Any]
            #expect(download?["epochs"] as? Int == 0)
            #expect(download?["startDateTime"] as? String == "07-21-2015 04:05:00")

            // Unknown keys are named with Unrecognized Configuration (3) and change nothing: raw keeps streaming.
            let requestsBefore = try await inspect(stack)["requests"]
            let unknown = try await configure(stack, #"{"raw":{"stream":false,"rate":50},"inu":{"gyroscope":false}}"#, "unknown")
            let refused = error(unknown)
            #expect(refused.code == "INVALID_VALUE")
            #expect(refused.vendor == 3)
            let message = (unknown?["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains("inu") && message.contains("rate"))
            // A rate the Link cannot run (11), a bad date (8), wrong JSON: all refused before anything is sent.
            #expect(error(try await configure(stack, #"{"sensors":{"accelerometer":{"rate_hz":200}}}"#, "rate")).vendor == 11)
            #expect(error(try await configure(stack, #"{"epoch":{"startDateTime":"2015-07-21","stopDateTime":"07-21-2015 04:06:00"}}"#, "date")).vendor == 8)
            try await stack.request("link/request/configure", "{\"raw\":")
            #expect(await eventually { stack.payloads("link/response/configure").contains { $0.contains("INVALID_PAYLOAD") } })
            let after = try await inspect(stack)
            #expect(after["requests"] == requestsBefore)
            #expect(after["raw_streaming"] == "true")
        }
    }

    @Test func aTwoHourEpochDownloadReportsProgressAndSurvivesALinkDrop() async throws {
        try await Stack.with(scenarioDevices: Self.scenario(options: "drop_after_pages: 1, fail_page: 0"),
                             configuredDevices: Self.configuredDevices) { stack in
            #expect(await connected(stack))
            // A bad date is the SDK's Date Format Error.
            try await stack.request("link/request/sync", #"{"startDateTime":"11-18-2026 25:00:00","transaction":"bad"}"#)
            let bad = error(await stack.response("link/response/sync", transaction: "bad"))
            #expect(bad.code == "INVALID_VALUE")
            #expect(bad.vendor == 8)

            // Two hours, 21:00:00 to 22:59:59 on 11-18-2026, as the SDK writes dates: 120 epochs on two pages.
            try await stack.request("link/request/sync",
                                    #"{"startDateTime":"11-18-2026 21:00:00","stopDateTime":"11-18-2026 22:59:59","transaction":"s1"}"#)
            // The Link fails to read the first page once (Wireless Transfer Error, asked again), then drops the link
            // after serving it: the request fails, the download resumes by itself.
            let first = await stack.response("link/response/sync", transaction: "s1")
            #expect(error(first).code == "DEVICE_DISCONNECTED")
            func syncStates() -> [String] {
                stack.payloads("link").compactMap(stack.json).compactMap { ($0["sync"] as? [String: Any])?["state"] as? String }
            }
            #expect(await eventually(timeout: .seconds(90)) { syncStates().last == "completed" })
            #expect(syncStates().contains("started"))
            #expect(syncStates().contains("downloading"))
            let epochs = stack.payloads("link/fitness/epoch").compactMap(stack.json)
            let ids = epochs.compactMap { $0["id"] as? String }
            #expect(ids.count == 120)
            #expect(Set(ids).count == ids.count)
            let times = epochs.compactMap { $0["ts"] as? Int }.sorted()
            #expect(times.first == (Self.epochEnd - 3 * 3600) * 1000)
            #expect(times.last == (Self.epochEnd - 3600 - 60) * 1000)
            let first120 = try #require(epochs.first)
            for key in ["x_counts", "y_counts", "z_counts", "steps", "heart_rate", "wear"] { #expect(first120[key] != nil, "\(key)") }
            let progress = stack.last("link")?["sync"] as? [String: Any]
            #expect(progress?["progress"] as? Double == 100 || progress?["progress"] as? Int == 100)
            #expect(progress?["last_ts"] as? Int == (Self.epochEnd - 3600 - 60) * 1000)

            // Another sync without a range fetches only what is newer: the last hour.
            try await stack.request("link/request/sync", #"{"transaction":"s2"}"#)
            let second = try #require(await stack.response("link/response/sync", transaction: "s2"))
            #expect((second["data"] as? [String: Any])?["epochs"] as? Int == 60)
            #expect(stack.payloads("link/fitness/epoch").count == 180)
        }
    }

    @Test func rawAcceleration100HzFor30SecondsArrivesWithoutLoss() async throws {
        try await Stack.with(scenarioDevices: Self.scenario(), configuredDevices: Self.configuredDevices) { stack in
            #expect(await connected(stack))
            // The contract's form this time.
            let started = try await configure(stack, #"{"sensors":{"accelerometer":{"rate_hz":100}},"raw_stream":true}"#, "on")
            #expect(started?["status"] as? String == "ok")
            try await Task.sleep(for: .seconds(30))
            let stopped = try await configure(stack, #"{"raw":{"stream":false}}"#, "off")
            #expect(stopped?["status"] as? String == "ok")
            let sent = Int(try await inspect(stack)["raw_samples_sent"] ?? "") ?? 0
            #expect(sent >= 2_500, "the Link streamed for about 30 s at 100 Hz")
            #expect(await eventually(timeout: .seconds(10)) { stack.payloads("link/sensor/accelerometer").count >= sent })
            let samples = stack.payloads("link/sensor/accelerometer").compactMap(stack.json)
            #expect(samples.count == sent, "every sample the Link sent was published once")
            let times = samples.compactMap { $0["ts"] as? Int }
            let steps = zip(times, times.dropFirst()).map { $1 - $0 }
            #expect(steps.allSatisfy { $0 == 10 }, "the Link's own 100 Hz sample times, in order, without gaps")
            #expect(stack.last("link")?["lost_samples"] == nil)
        }
    }
}
