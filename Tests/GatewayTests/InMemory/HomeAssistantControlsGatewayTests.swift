import BlueZ
import Gateway
import SimulatedWearables
import Testing
import Wear2MQTTTesting
import Wearables

/// Home Assistant entities that need a whole gateway: fitness summaries from a real sync (kept across a restart),
/// Bose controls from the capabilities read on connect, and signal strength from what BlueZ hears.
@Suite("Gateway in memory: Home Assistant summaries and controls")
struct HomeAssistantControlsGatewayTests {
    func discovery(_ gateway: GatewayHarness, _ address: String) -> [String: DeviceValue]? {
        let object = "wear2mqtt_wear2mqtt_" + address.replacingOccurrences(of: ":", with: "").lowercased()
        return gateway.sink.retained("homeassistant/device/\(object)/config").flatMap { GatewayHarness.object($0.payload) }
    }

    /// A gateway managing one simulated device of `kind`, started. The first wait of each test (the device
    /// detected, connected and described) is a 60 s hang guard: all three missed 20 s together in a full run on two
    /// cores at load average 13.
    func started(_ kind: String, at address: String, name: String) async throws -> GatewayHarness {
        let gateway = try GatewayHarness(configuration: "devices:\n  - address: \"\(address)\"\n    name: \(name)")
        try gateway.addDevice(kind, address: address)
        await gateway.start()
        return gateway
    }

    func value(_ gateway: GatewayHarness, _ topic: String) -> Double? {
        gateway.sink.messages(on: topic).last.flatMap { Double(String(decoding: $0.payload, as: UTF8.self)) }
    }

    @Test("a GoFIT sync feeds steps today, the newest synced heart rate, SpO2, sleep score and the last sync; a restart keeps them")
    func fitnessSummariesFromASync() async throws {
        // The gateway's clock says 2025-06-15 15:06 UTC; the band's history ends then. The clock moves as the test steps
        // it: the device list's settling, the summaries' interval and Home Assistant's debounce run on it (the band keeps
        // the machine's).
        let clock = ManualClock()
        let now = clock.unixMilliseconds
        let gateway = try await GoFITGatewayTests.started(options: ["history_days": .int(2), "history_end": .int(Int(now / 1000 - now / 1000 % 1200))],
                                                         extra: "homeassistant:\n  state_interval_s: 1", time: clock.timeSource)
        try await withStopping(gateway) { gateway in
            let summaries = ["steps_today", "last_heart_rate", "last_spo2", "sleep_score", "last_sync"]
            #expect(await clock.step(by: .milliseconds(100)) {
                let components = discovery(gateway, GoFITGatewayTests.band)?["cmps"]
                return summaries.allSatisfy { components?[$0]?["state_topic"]?.text == "test/band/ha/\($0)" }
            })
            #expect(discovery(gateway, GoFITGatewayTests.band)?["cmps"]?["steps_today"]?["state_class"]?.text == "total_increasing")
            try await GoFITGatewayTests.pair(gateway)
            #expect(await gateway.request("band/request/sync")?["status"]?.text == "ok")

            // What the records say, counted here independently: steps of today's buckets (UTC here), the newest values.
            func records(_ kind: String) -> [[String: DeviceValue]] { gateway.all("band/fitness/\(kind)") }
            let midnight = now - now % 86_400_000
            let steps = records("steps").filter { ($0["ts"]?.integer ?? 0) >= midnight }.compactMap { $0["steps"]?.integer }.reduce(0, +)
            let newest = { (kind: String, field: String) in
                records(kind).max { ($0["ts"]?.integer ?? 0) < ($1["ts"]?.integer ?? 0) }?[field]?.number
            }
            #expect(await clock.step(by: .milliseconds(100)) { value(gateway, "test/band/ha/last_sync") != nil })
            #expect(value(gateway, "test/band/ha/steps_today") == Double(steps))
            #expect(value(gateway, "test/band/ha/last_heart_rate") == newest("heart_rate", "bpm"))
            #expect(value(gateway, "test/band/ha/last_spo2") == newest("spo2", "percent"))
            #expect(value(gateway, "test/band/ha/sleep_score") == newest("sleep", "score"))

            // Restarted on the same state directory: Home Assistant coming online gets the same steps, without a sync.
            try await withStopping(gateway.restarted()) { restarted in
                await restarted.receive("homeassistant/status", "online")
                #expect(await clock.step(by: .milliseconds(100)) {
                    value(restarted, "test/band/ha/steps_today") == Double(steps) && value(restarted, "test/band/ha/last_sync") != nil
                })
            }
        }
    }

    @Test("Bose Frames: the shared sensor period is a select of the periods every sensor offers, each sensor and gesture a switch")
    func boseControls() async throws {
        let frames = "C0:FF:EE:00:00:05"
        try await withStopping(started("bose_frames", at: frames, name: "frames")) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { discovery(gateway, frames)?["cmps"]?["setting_sensor_period"] != nil })
            let components = try #require(discovery(gateway, frames)?["cmps"])
            let period = try #require(components["setting_sensor_period"])
            #expect(period["p"]?.text == "select" && period["command_topic"]?.text == "test/frames/request/configure")
            let options = period["options"]?.list?.compactMap(\.text) ?? []
            #expect(!options.isEmpty && options.allSatisfy { Int($0) != nil })
            #expect(components["setting_sensor_accelerometer"]?["p"]?.text == "switch")
            #expect(components["setting_gesture_double_tap"]?["p"]?.text == "switch")

            // What the controls send, as Home Assistant renders their command templates.
            let chosen = try #require(options.last)
            #expect(await gateway.request("frames/request/configure", #"{"period_ms":\#(chosen)}"#)?["status"]?.text == "ok")
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("frames")?["sensor_period_ms"]?.integer == Int64(chosen) })
            #expect(await gateway.request("frames/request/configure", #"{"sensors":{"accelerometer":{"enabled":true}}}"#)?["status"]?.text == "ok")
            #expect(await gateway.until(timeout: .seconds(60)) {
                gateway.last("frames")?["sensors"]?["accelerometer"] == ["enabled": true, "period_ms": .integer(Int64(chosen)!)]
            })
            #expect(await gateway.until(timeout: .seconds(60)) { !gateway.sink.messages(on: "test/frames/sensor/accelerometer").isEmpty })
        }
    }

    @Test("signal strength: BlueZ's RSSI reaches the device state when it moves by 5 dB or more")
    func signalStrength() async throws {
        let strap = "C0:FF:EE:00:00:01"
        try await withStopping(started("heart_rate_strap", at: strap, name: "strap")) { gateway in
            let address = try #require(BluetoothAddress(strap))
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap")?["connection"]?.text == "connected" })
            gateway.central.setRSSI(address, -70)
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap")?["rssi"]?.integer == -70 })
            gateway.central.setRSSI(address, -72)
            gateway.central.setRSSI(address, -58)
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap")?["rssi"]?.integer == -58 })
            #expect(!gateway.all("strap").contains { $0["rssi"]?.integer == -72 }, "a 2 dB wobble is not news")
        }
    }
}
