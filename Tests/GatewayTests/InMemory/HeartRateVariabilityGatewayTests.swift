import EventLoop
import BlueZ
@testable import Gateway
import SimulatedWearables
import Testing
import Wear2MQTTTesting
import Wearables

/// `sensor/hrv` through a whole gateway in memory (`GatewayHarness`): the core, device manager, session and driver of
/// a simulated strap, its Home Assistant entities and `bridge/devices`.
@Suite("Gateway in memory: heart-rate variability")
struct HeartRateVariabilityGatewayTests {
    static let strap = "C0:FF:EE:00:00:01"
    static let strapConfig = "homeassistant/device/wear2mqtt_wear2mqtt_c0ffee000001/config"

    /// `time`: the gateway's clock; `central`: the strap's (one `ManualClock` for both where the test moves time for the
    /// strap's beats and the gateway's ticks alike).
    static func started(_ extra: String = "", strapOptions: [String: SimulationOptionValue],
                        time: TimeSource? = nil, central: InMemoryCentral = InMemoryCentral()) async throws -> GatewayHarness {
        let gateway = try GatewayHarness(configuration: """
        devices:
          - address: "\(strap)"
            driver: standard
            name: strap
        \(extra)
        """, central: central, time: time)
        try gateway.addDevice("heart_rate_strap", address: strap, options: strapOptions)
        await gateway.start()
        return gateway
    }

    @Test("RR intervals reported by a connected strap: sensor/hrv on the tick with RMSSD 50, Home Assistant's HRV entities and hrv in bridge/devices")
    func knownSeriesThroughTheGateway() async throws {
        // The simulated strap reports its heart rate but no RR intervals; the test reports a series whose answer is known
        // under the strap's id, as its session would, ending at the harness's wall clock.
        let clock = ManualClock()
        try await withStopping(Self.started("homeassistant:\n  state_interval_s: 1", strapOptions: ["rr_intervals": .bool(false)],
                                            time: clock.timeSource)) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap/availability")?["state"]?.text == "online" })
            let now = clock.unixMilliseconds
            var time = now - 49_500
            for index in 0..<60 {
                let interval: Double = index % 2 == 0 ? 800 : 850
                time += Int64(interval)
                gateway.core.handle(.device(id: "strap", .event(.sample(SensorSample(
                    sensor: .heartRate, timestamp: time,
                    reading: .heartRate(bpm: 73, contact: true, energyExpendedKJ: nil, rrIntervalsMilliseconds: [interval]))))))
            }
            #expect(time == now)
            #expect(gateway.last("strap/sensor/hrv") == nil, "not before the tick")
            // The tick, 10 s on, as the periodic work reaches it: run here too, so it does not wait for the harness's
            // periodic task to have its turn after the clock moved (whichever takes the tick publishes it).
            await clock.advance(by: .seconds(10))
            _ = gateway.core.flushDueSamples()
            #expect(await gateway.until { gateway.last("strap/sensor/hrv") != nil })
            let hrv = try #require(gateway.last("strap/sensor/hrv"))
            #expect(hrv["ts"]?.integer == now + 10_000, "stamped at the tick")
            #expect(hrv["rmssd_ms"]?.number == 50 && hrv["pnn50_pct"]?.number == 0)
            #expect(abs((hrv["sdnn_ms"]?.number ?? 0) - 25 * (60.0 / 59).squareRoot()) < 1e-9)
            #expect(hrv["intervals"]?.integer == 60 && hrv["rejected"]?.integer == 0 && hrv["window_s"]?.integer == 60)
            #expect(gateway.sink.messages(on: "test/strap/sensor/hrv").allSatisfy { $0.qos == .atMostOnce && !$0.retain })
            #expect(gateway.sink.messages(on: "test/strap/ha/hrv_rmssd").last.map { String(decoding: $0.payload, as: UTF8.self) } == "50")
            // The new entities go out with the device list, which settles 300 ms (its timer beside the harness's
            // periodic one) after it changed.
            #expect(await clock.sleepers(atLeast: 2))
            await clock.advance(by: .milliseconds(300))
            #expect(await gateway.until(timeout: .seconds(60)) {
                gateway.sink.retained(Self.strapConfig).flatMap { GatewayHarness.object($0.payload) }?["cmps"]?["hrv_rmssd"]?["state_topic"]?.text
                    == "test/strap/ha/hrv_rmssd"
            })
            #expect(await gateway.until(timeout: .seconds(60)) {
                gateway.sink.retained("test/bridge/devices").map { String(decoding: $0.payload, as: UTF8.self).contains(#""hrv""#) } == true
            })
        }
    }

    @Test("a simulated strap's own RR intervals, decoded by the standard driver, become sensor/hrv with measures once its window fills")
    func simulatedStrapEndToEnd() async throws {
        // 150 bpm (400 ms): 30 clean intervals in 12 s, half of a 30 s window in 15 s. The strap and the gateway share one
        // clock, moved here: the window slides with the strap's samples.
        let clock = ManualClock()
        let gateway = try await Self.started("hrv:\n  window_s: 30\n  interval_s: 2", strapOptions: ["bpm": .double(150)],
                                             time: clock.timeSource, central: InMemoryCentral(time: clock.timeSource))
        try await withStopping(gateway) { gateway in
            #expect(await clock.step(by: .milliseconds(100)) { gateway.last("strap/sensor/hrv")?["rmssd_ms"] != nil })
            let hrv = try #require(gateway.last("strap/sensor/hrv"))
            let intervals = try #require(hrv["intervals"]?.integer)
            #expect(intervals >= 30 && intervals <= 100 && hrv["window_s"]?.integer == 30, "at most 30 s of beats: \(hrv)")
            // The simulated rhythm varies by ±3 % from beat to beat around 400 ms: an RMSSD near 10 ms.
            let rmssd = try #require(hrv["rmssd_ms"]?.number)
            #expect(rmssd > 0 && rmssd < 40, "\(hrv)")
            let meanHR = try #require(hrv["mean_hr_bpm"]?.number)
            #expect((120...190).contains(meanHR), "\(hrv)")
            // Every publication before the window filled said how many intervals it had, without measures.
            let earlier = gateway.all("strap/sensor/hrv").filter { $0["rmssd_ms"] == nil }
            #expect(earlier.allSatisfy { $0["intervals"] != nil && $0["sdnn_ms"] == nil })
        }
    }
}
