import EventLoop
import BlueZ
import Gateway
import SimulatedWearables
import Synchronization
import Testing
import Wear2MQTTTesting
import Wearables

/// Home Assistant for Polar sensors through a whole gateway in memory: heart rate up front, a switch per stream
/// and a select per rate or range the device offers more than one of (from what it listed on connect), and the
/// inter-beat interval and HRV entities once PPI beats come.
@Suite("Gateway in memory: Home Assistant for Polar")
struct HomeAssistantPolarGatewayTests {
    static let h10 = "A0:9E:1A:00:00:21"
    static let sense = "A0:9E:1A:00:00:22"

    func discovery(_ gateway: GatewayHarness, _ address: String) -> [String: DeviceValue]? {
        let object = "wear2mqtt_wear2mqtt_" + address.replacingOccurrences(of: ":", with: "").lowercased()
        return gateway.sink.retained("homeassistant/device/\(object)/config").flatMap { GatewayHarness.object($0.payload) }
    }

    @Test("H10: heart rate, battery, ECG and accelerometer switches, accelerometer rate and range selects that configure works with")
    func h10Controls() async throws {
        let gateway = try GatewayHarness(configuration: "devices:\n  - address: \"\(Self.h10)\"\n    name: h10\nhomeassistant:\n  state_interval_s: 1")
        try gateway.addDevice("polar_h10", address: Self.h10)
        await gateway.start()
        try await withStopping(gateway) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { discovery(gateway, Self.h10)?["cmps"]?["setting_accelerometer_rate_hz"] != nil })
            let components = try #require(discovery(gateway, Self.h10)?["cmps"]?.object)
            #expect(components["heart_rate"]?["state_topic"]?.text == "test/h10/ha/heart_rate")
            #expect(components["battery"] != nil)
            #expect(components["setting_sensor_ecg"]?["p"]?.text == "switch")
            #expect(components["setting_sensor_accelerometer"]?["command_topic"]?.text == "test/h10/request/configure")
            let rate = try #require(components["setting_accelerometer_rate_hz"])
            #expect(rate["p"]?.text == "select" && rate["options"] == ["25", "50", "100", "200"])
            #expect(components["setting_accelerometer_range"]?["options"] == ["2", "4", "8"])
            #expect(components["setting_ecg_rate_hz"] == nil, "one ECG rate: nothing to choose")
            #expect(components["setting_sensor_ppg"] == nil, "the H10 has no PPG")

            // What the switch sends is a request the driver takes.
            let payload = try #require(components["setting_sensor_ecg"]?["payload_on"]?.text)
            #expect(await gateway.request("h10/request/configure", payload)?["status"]?.text == "ok", "\(payload)")
            #expect(await gateway.until { !gateway.all("h10/sensor/ecg").isEmpty })
            #expect(gateway.sink.messages(on: "test/h10/ha/ecg").isEmpty, "no entity for a raw waveform")
        }
    }

    @Test("Verity Sense: its five stream switches, and the inter-beat interval and HRV entities once PPI runs")
    func veritySensePPI() async throws {
        // The sensor and the gateway share one clock, moved here: its answers, its beats and the HRV ticks come as the
        // test steps it.
        let clock = ManualClock()
        let gateway = try GatewayHarness(configuration: "devices:\n  - address: \"\(Self.sense)\"\n    name: sense\n"
                                         + "homeassistant:\n  state_interval_s: 1\nhrv:\n  window_s: 30\n  interval_s: 1",
                                         central: InMemoryCentral(time: clock.timeSource), time: clock.timeSource)
        try gateway.addDevice("polar_verity_sense", address: Self.sense, options: ["bpm": .int(120)])
        await gateway.start()
        try await withStopping(gateway) { gateway in
            #expect(await clock.step(by: .milliseconds(10)) { discovery(gateway, Self.sense)?["cmps"]?["setting_sensor_ppi"] != nil })
            let components = try #require(discovery(gateway, Self.sense)?["cmps"]?.object)
            #expect(Set(components.keys.filter { $0.hasPrefix("setting_sensor_") })
                == ["setting_sensor_ppg", "setting_sensor_accelerometer", "setting_sensor_ppi", "setting_sensor_gyroscope", "setting_sensor_magnetometer"])
            #expect(components["setting_magnetometer_rate_hz"]?["options"] == ["10", "20", "50", "100"])
            #expect(components["setting_gyroscope_range"]?["options"] == ["250", "500", "1000", "2000"])
            #expect(components["ibi"] == nil)

            let answer = Mutex<[String: DeviceValue]??>(nil)
            Task {
                let configured = await gateway.request("sense/request/configure", #"{"sensors":{"ppi":{}}}"#)
                answer.withLock { $0 = .some(configured) }
            }
            #expect(await clock.step(by: .milliseconds(10)) { answer.withLock { $0 } != nil })
            #expect(answer.withLock { $0 }??["status"]?.text == "ok")
            #expect(await clock.step(by: .milliseconds(100)) {
                discovery(gateway, Self.sense)?["cmps"]?["ibi"] != nil && discovery(gateway, Self.sense)?["cmps"]?["hrv_rmssd"] != nil
            })
            #expect(await clock.step(by: .milliseconds(100)) {
                gateway.sink.messages(on: "test/sense/ha/ibi").last.flatMap { Double(String(decoding: $0.payload, as: UTF8.self)) }
                    .map { abs($0 - 500) < 25 } == true
            })
        }
    }
}
