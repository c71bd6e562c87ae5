import Foundation
import Simulator
import Testing
import Wear2MQTTTesting

/// A Polar H10 over the whole product: the simulator serves the PMD service from the Polar codecs, the gateway's
/// `polar` driver reads what the strap offers, starts ECG at 130 Hz and acceleration at 200 Hz together from one
/// MQTT request, and every sample arrives; RR intervals and heart-rate variability come with them. A Verity Sense
/// streams PPG without loss and PPI beats that heart-rate variability is computed from. The H10 records on itself
/// over PSFTP: start, stop, list, fetch and remove through MQTT. Every command's errors are tested in memory
/// (Tests/GatewayTests/InMemory/PolarGatewayTests.swift, PolarRecordingGatewayTests.swift).
@Suite
struct PolarEndToEndTests {
    static let strap = "A0:9E:1A:00:00:10"

    static let scenarioDevices = """
      - kind: polar_h10
        address: \(strap)
        advertising_interval: 100ms
        options: { bpm: 150 }
    """

    /// No driver named: the gateway picks `polar` from the name and the PMD service.
    static let configuredDevices = """
      - address: \(strap)
        name: h10
    """

    func times(_ stack: Stack, _ topic: String) -> [Int] {
        stack.payloads(topic).compactMap(stack.json).compactMap { $0["ts"] as? Int }
    }

    /// At least `count` sample times on `topic`. Counted on the payloads first, which are at least as many: a wait
    /// re-checked at each of hundreds of messages a second decodes them only once there can be enough.
    func hasTimes(_ stack: Stack, _ topic: String, _ count: Int) -> Bool {
        stack.payloads(topic).count >= count && times(stack, topic).count >= count
    }

    /// Samples the series lacks: the device stamps sample n at start + n / rate, so between the first and the last
    /// timestamp there are exactly (last − first) × rate / 1000 more (±1 for the milliseconds cut off each end).
    func missing(_ times: [Int], rate: Double) -> Int {
        guard let first = times.first, let last = times.last else { return Int.max }
        let expected = Int((Double(last - first) * rate / 1000).rounded()) + 1
        return abs(expected - times.count) <= 1 ? 0 : expected - times.count
    }

    @Test func ecgAt130HzAndAccelerationAt200HzTogetherWithoutLossAndHeartRateVariability() async throws {
        try await Stack.with(scenarioDevices: Self.scenarioDevices, configuredDevices: Self.configuredDevices,
                             gatewayExtra: "hrv:\n  window_s: 30\n  interval_s: 2") { stack in
            #expect(await stack.until(timeout: .seconds(60)) {
                (stack.last("h10")?["capabilities"] as? [String: Any])?["sensors"] != nil
            })
            #expect(stack.payloads("bridge/devices").last?.contains(#""driver":"polar""#) == true)

            try await stack.request("h10/request/configure",
                                    #"{"transaction":"both","sensors":{"ecg":{},"accelerometer":{"rate_hz":200,"range":8}}}"#)
            let answer = await stack.response("h10/response/configure", transaction: "both")
            #expect(answer?["status"] as? String == "ok", "\(String(describing: answer))")

            // A few seconds of both streams at once.
            #expect(await stack.until(timeout: .seconds(60)) { hasTimes(stack, "h10/sensor/ecg", 130 * 5) })
            #expect(await stack.until(timeout: .seconds(30)) { hasTimes(stack, "h10/sensor/accelerometer", 200 * 5) })
            let ecg = times(stack, "h10/sensor/ecg")
            let acc = times(stack, "h10/sensor/accelerometer")
            #expect(missing(ecg, rate: 130) == 0, "ECG: \(ecg.count) samples over \(ecg.last! - ecg.first!) ms")
            #expect(missing(acc, rate: 200) == 0, "ACC: \(acc.count) samples over \(acc.last! - acc.first!) ms")
            // And no sample out of place: 1/130 s is 7.7 ms, 1/200 s exactly 5.
            #expect(zip(ecg.dropFirst(), ecg).allSatisfy { (7...8).contains($0 - $1) })
            #expect(zip(acc.dropFirst(), acc).allSatisfy { $0 - $1 == 5 })
            let peaks = stack.payloads("h10/sensor/ecg").compactMap(stack.json).compactMap { $0["uv"] as? Int }.filter { $0 > 900 }
            #expect(!peaks.isEmpty, "R peaks in the ECG")

            // RR intervals on heart_rate, and from them sensor/hrv at the strap's 150 bpm.
            #expect(stack.payloads("h10/sensor/heart_rate").contains { $0.contains("rr_ms") })
            #expect(await stack.until(timeout: .seconds(60)) { stack.last("h10/sensor/hrv")?["rmssd_ms"] != nil })
            let meanHR = stack.last("h10/sensor/hrv")?["mean_hr_bpm"] as? Double ?? 0
            #expect(abs(meanHR - 150) < 5, "\(String(describing: stack.last("h10/sensor/hrv")))")
        }
    }

    @Test func veritySenseStreamsPPGAndPPIAndHeartRateVariabilityFromItsBeats() async throws {
        let sense = "A0:9E:1A:00:00:11"
        try await Stack.with(scenarioDevices: """
          - kind: polar_verity_sense
            address: \(sense)
            advertising_interval: 100ms
            options: { bpm: 120 }
        """, configuredDevices: "  - address: \(sense)\n    name: sense", gatewayExtra: "hrv:\n  window_s: 30\n  interval_s: 2") { stack in
            #expect(await stack.until(timeout: .seconds(60)) {
                (stack.last("sense")?["capabilities"] as? [String: Any])?["sensors"] != nil
            })
            try await stack.request("sense/request/configure", #"{"transaction":"ppx","sensors":{"ppg":{},"ppi":{}}}"#)
            let answer = await stack.response("sense/response/configure", transaction: "ppx")
            #expect(answer?["status"] as? String == "ok", "\(String(describing: answer))")
            #expect(await stack.until(timeout: .seconds(60)) { hasTimes(stack, "sense/sensor/ppg", 55 * 3) })
            let ppg = times(stack, "sense/sensor/ppg")
            #expect(missing(ppg, rate: 55) == 0, "PPG: \(ppg.count) samples over \(ppg.last! - ppg.first!) ms")
            // PPI beats at 120 bpm, and heart-rate variability from them.
            #expect(await stack.until(timeout: .seconds(60)) { stack.last("sense/sensor/hrv")?["rmssd_ms"] != nil })
            let intervals = stack.payloads("sense/sensor/ppi").compactMap(stack.json).compactMap { $0["interval_ms"] as? Int }
            #expect(!intervals.isEmpty && intervals.allSatisfy { abs($0 - 500) <= 20 }, "\(intervals)")
            let meanHR = stack.last("sense/sensor/hrv")?["mean_hr_bpm"] as? Double ?? 0
            #expect(abs(meanHR - 120) < 4, "\(String(describing: stack.last("sense/sensor/hrv")))")
        }
    }

    @Test func h10RecordsOnItselfAndTheRecordingIsFetchedAsADurableRecord() async throws {
        let recorder = "A0:9E:1A:00:00:12"
        // The strap's recording clock runs an hour a second: even the 5 ms before it answers the start are 18 s of
        // recording, so the stop that follows the answer always finds samples.
        try await Stack.with(scenarioDevices: """
          - kind: polar_h10
            address: \(recorder)
            advertising_interval: 100ms
            options: { recording_speed: 3600 }
        """, configuredDevices: "  - address: \(recorder)\n    name: strap") { stack in
            #expect(await stack.until(timeout: .seconds(60)) {
                (stack.last("strap")?["capabilities"] as? [String: Any])?["recording"] as? Bool == true
            })
            func ask(_ transaction: String, _ body: String) async throws -> [String: Any]? {
                try await stack.request("strap/request/recording", #"{"transaction":"\#(transaction)",\#(body)}"#)
                let answer = await stack.response("strap/response/recording", transaction: transaction)
                #expect(answer?["status"] as? String == "ok", "\(transaction): \(String(describing: answer))")
                return answer?["data"] as? [String: Any]
            }
            _ = try await ask("start", #""action":"start","identifier":"e2e","sample_type":"hr","interval_s":1"#)
            #expect(await stack.until(timeout: .seconds(30)) {
                (stack.last("strap")?["recording"] as? [String: Any])?["active"] as? Bool == true
            })
            _ = try await ask("stop", #""action":"stop""#)
            let list = try await ask("list", #""action":"list""#)
            let exercises = list?["exercises"] as? [[String: Any]] ?? []
            #expect(exercises.map { $0["identifier"] as? String } == ["e2e"], "\(String(describing: list))")
            let fetched = try await ask("fetch", #""action":"fetch","identifier":"e2e""#)
            let rates = fetched?["heart_rates"] as? [Int] ?? []
            #expect(!rates.isEmpty && rates.allSatisfy { (55...66).contains($0) }, "\(rates)")
            #expect(await stack.until(timeout: .seconds(30)) {
                (stack.last("strap/fitness/recording")?["heart_rates"] as? [Int]) == rates
            })
            _ = try await ask("remove", #""action":"remove","identifier":"e2e""#)
            let after = try await ask("list2", #""action":"list""#)
            #expect((after?["exercises"] as? [Any])?.isEmpty == true)
        }
    }
}
