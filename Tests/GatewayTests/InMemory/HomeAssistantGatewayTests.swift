import EventLoop
import BlueZ
import Gateway
import SimulatedWearables
import Testing
import Wear2MQTTTesting
import Wearables

/// Home Assistant discovery through the whole gateway in memory: what is published, when, and what removes it.
@Suite("Gateway in memory: Home Assistant discovery", .timeLimit(.minutes(1)))
struct HomeAssistantGatewayTests {
    static let strap = "C0:FF:EE:00:00:01"
    static let bridgeConfig = "homeassistant/device/wear2mqtt_wear2mqtt_bridge/config"
    static let strapConfig = "homeassistant/device/wear2mqtt_wear2mqtt_c0ffee000001/config"

    /// `time`: the gateway's clock (a `ManualClock`'s where a test moves through Home Assistant's debounce).
    static func started(_ extra: String = "", time: TimeSource? = nil) async throws -> GatewayHarness {
        let gateway = try GatewayHarness(configuration: """
        devices:
          - address: "\(strap)"
            name: strap
        \(extra)
        """, time: time)
        try gateway.addDevice("heart_rate_strap", address: strap, options: ["rate_hz": .int(5)])
        await gateway.start()
        return gateway
    }

    func discovery(_ gateway: GatewayHarness, _ topic: String) -> [String: DeviceValue]? {
        gateway.sink.retained(topic).flatMap { GatewayHarness.object($0.payload) }
    }

    @Test("the bridge and the strap are discovered, retained; heart rate appears once it streams, fed calmly")
    func bridgeAndStrapAreDiscovered() async throws {
        let begun = ContinuousClock.now
        try await withStopping(Self.started("homeassistant:\n  state_interval_s: 1")) { gateway in
            #expect(discovery(gateway, Self.bridgeConfig)?["cmps"]?["scan"] != nil)
            #expect(await gateway.until(timeout: .seconds(60)) { discovery(gateway, Self.strapConfig)?["cmps"]?["heart_rate"] != nil })
            let strap = try #require(discovery(gateway, Self.strapConfig))
            #expect(strap["dev"]?["via_device"]?.text == "wear2mqtt_wear2mqtt_bridge")
            #expect(strap["cmps"]?["battery"] != nil)
            #expect(strap["cmps"]?["heart_rate"]?["state_topic"]?.text == "test/strap/ha/heart_rate")
            // Its RR intervals, once they come, are the inter-beat interval entity.
            #expect(await gateway.until(timeout: .seconds(60)) { discovery(gateway, Self.strapConfig)?["cmps"]?["ibi"]?["unit_of_measurement"]?.text == "ms" })
            // Five samples a second on sensor/heart_rate; at most about one a second on ha/heart_rate. Waits for the
            // samples rather than a fixed time: on a loaded machine the strap's 3 s can take far longer.
            #expect(await gateway.until(timeout: .seconds(60)) {
                gateway.sink.messages(on: "test/strap/sensor/heart_rate").count >= 10
                    && gateway.sink.messages(on: "test/strap/ha/heart_rate").count >= 2
            })
            let samples = gateway.sink.messages(on: "test/strap/sensor/heart_rate").count
            let calm = gateway.sink.messages(on: "test/strap/ha/heart_rate").count
            // At most one a second since the test began (on a loaded machine the 3 s wait runs long, and samples slow).
            let seconds = Int((ContinuousClock.now - begun).components.seconds)
            #expect(samples >= 10 && calm >= 2 && calm <= seconds + 1, "\(samples) samples, \(calm) entity states in \(seconds) s")
            #expect(gateway.sink.messages(on: "test/strap/ha/heart_rate").allSatisfy { Double(String(decoding: $0.payload, as: UTF8.self)) != nil })
            // The same document is not published twice.
            let documents = gateway.sink.messages(on: Self.strapConfig)
            #expect(Set(documents.map(\.payload)).count == documents.count)
        }
    }

    @Test("Home Assistant coming online gets discovery, states and entity values again")
    func homeAssistantRestart() async throws {
        let clock = ManualClock()
        try await withStopping(Self.started(time: clock.timeSource)) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { !gateway.sink.messages(on: "test/strap/ha/heart_rate").isEmpty })
            let before = gateway.sink.messages.count
            await gateway.receive("homeassistant/status", "online")
            // After a short random wait (0.5–2.5 s), so a fleet of gateways does not answer at once: nothing before. Its
            // timer asleep beside the harness's periodic work and the first device list, settling.
            #expect(await clock.sleepers(atLeast: 3))
            await clock.advance(by: .milliseconds(499))
            #expect(!gateway.sink.messages.dropFirst(before).contains { $0.topic == Self.bridgeConfig }, "not within 0.5 s")
            await clock.advance(by: .milliseconds(2_001))
            #expect(await gateway.until {
                let after = gateway.sink.messages.dropFirst(before).map(\.topic)
                return after.contains(Self.bridgeConfig) && after.contains(Self.strapConfig) && after.contains("test/strap")
                    && after.contains("test/strap/ha/heart_rate")
            })
            let count = gateway.sink.messages.count
            await gateway.receive("homeassistant/status", "offline")
            #expect(gateway.sink.messages.dropFirst(count).allSatisfy { !$0.topic.hasPrefix("homeassistant/") }, "offline asks for nothing")
        }
    }

    @Test("a storm of 2,000 online messages gives what one gives, and no request waits for it", arguments: [1, 2_000])
    func onlineStormIsCoalesced(storm: Int) async throws {
        let clock = ManualClock()
        try await withStopping(Self.started(time: clock.timeSource)) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { !gateway.sink.messages(on: "test/strap/ha/heart_rate").isEmpty })
            let before = gateway.sink.messages.count
            /// The bridge's discovery documents published since the storm (only a republish publishes it; the strap's
            /// also follows its new sensors).
            func published() -> Int { gateway.sink.messages.dropFirst(before).filter { $0.topic == Self.bridgeConfig }.count }
            for _ in 0..<storm { await gateway.receive("homeassistant/status", "online") }
            // Each was handled at once: a request right after the storm is answered before the republish.
            #expect(await gateway.request("bridge/request/health_check")?["status"]?.text == "ok")
            #expect(published() == 0)
            // The republish's timer asleep beside the harness's periodic work and the first device list, settling; it
            // ends at most 5 s after the first online.
            #expect(await clock.sleepers(atLeast: 3))
            await clock.advance(by: .seconds(5))
            #expect(await gateway.until { published() >= 1 })
            // Anything a second republish would wait for is past too; the request is answered after what came before.
            await clock.advance(by: .seconds(6))
            #expect(await gateway.request("bridge/request/health_check")?["status"]?.text == "ok")
            #expect(published() == 1)
        }
    }

    @Test("device/remove deletes the device from Home Assistant; a rename keeps it")
    func removeAndRename() async throws {
        try await withStopping(Self.started()) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { discovery(gateway, Self.strapConfig) != nil })
            #expect(await gateway.request("bridge/request/device/rename", #"{"id":"strap","name":"chest"}"#)?["status"]?.text == "ok")
            #expect(await gateway.until(timeout: .seconds(60)) {
                discovery(gateway, Self.strapConfig)?["availability"]?.list?.contains { $0["topic"]?.text == "test/chest/availability" } == true
            })
            #expect(!gateway.sink.wasCleared(Self.strapConfig), "a rename updates the device in place")
            #expect(await gateway.request("bridge/request/device/remove", #"{"id":"chest"}"#)?["status"]?.text == "ok")
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.sink.wasCleared(Self.strapConfig) })
        }
    }

    @Test("with homeassistant.enabled false nothing goes to the discovery prefix")
    func disabled() async throws {
        try await withStopping(Self.started("homeassistant:\n  enabled: false")) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { !gateway.sink.messages(on: "test/strap/sensor/heart_rate").isEmpty })
            #expect(!gateway.sink.messages.contains { $0.topic.hasPrefix("homeassistant/") || $0.topic.contains("/ha/") })
        }
    }

    @Test("a pulse oximeter's spot check is a trigger from the moment it connects, and fires with its result")
    func spotCheckTrigger() async throws {
        let address = "C0:FF:EE:00:00:03"
        let gateway = try GatewayHarness(configuration: """
        devices:
          - address: "\(address)"
            name: ox
        """)
        try gateway.addDevice("pulse_oximeter", address: address)
        await gateway.start()
        try await withStopping(gateway) { gateway in
            let config = "homeassistant/device/wear2mqtt_wear2mqtt_c0ffee000003/config"
            #expect(await gateway.until(timeout: .seconds(60)) {
                discovery(gateway, config)?["cmps"]?["event_spot_check"]?["p"]?.text == "device_automation"
            })
            #expect(discovery(gateway, config)?["cmps"]?["spo2"] != nil, "known from the service, before any sample")
            // The oximeter indicates a spot check once; wait until the driver listens (PLX Spot-Check Measurement).
            let oximeter = try #require(BluetoothAddress(address))
            #expect(await gateway.until(timeout: .seconds(60)) { await gateway.central.isSubscribed("2a5e", on: oximeter) })
            #expect(await gateway.central.trigger(.spotCheck, on: oximeter))
            #expect(await gateway.until(timeout: .seconds(60)) {
                gateway.all("ox/event").contains { $0["event"]?.text == "spot_check" && $0["spo2"]?.number != nil }
            })
        }
    }
}
