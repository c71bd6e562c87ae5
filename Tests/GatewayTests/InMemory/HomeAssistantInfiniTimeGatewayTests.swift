import BlueZ
import Gateway
import SimulatedWearables
import Testing
import Wear2MQTTTesting
import Wearables

/// A PineTime in Home Assistant: battery, heart rate and steps as sensors, a find button that buzzes the watch, and
/// a device trigger for each music and call button, told apart by the event and its action.
@Suite("Gateway in memory: Home Assistant for InfiniTime")
struct HomeAssistantInfiniTimeGatewayTests {
    static let watch = "C7:1E:00:00:00:03"
    static let address = BluetoothAddress(watch)!
    static let config = "homeassistant/device/wear2mqtt_wear2mqtt_c71e00000003/config"

    @Test("battery, heart rate and steps entities, a find button, and triggers per music and call button")
    func watchEntities() async throws {
        let gateway = try GatewayHarness(configuration: """
        devices:
          - address: "\(Self.watch)"
            name: watch
        homeassistant:
          state_interval_s: 1
        """)
        try gateway.addDevice("pinetime_infinitime", address: Self.watch)
        await gateway.start()
        try await withStopping(gateway) { gateway in
            func components() -> [String: DeviceValue] {
                gateway.sink.retained(Self.config).flatMap { GatewayHarness.object($0.payload) }?["cmps"]?.object ?? [:]
            }
            #expect(await gateway.until(timeout: .seconds(60)) { components()["steps"] != nil && components()["heart_rate"] != nil })
            let entities = components()
            #expect(entities["battery"]?["device_class"]?.text == "battery")
            #expect(entities["steps"]?["state_class"]?.text == "total_increasing")
            #expect(entities["steps"]?["state_topic"]?.text == "test/watch/ha/steps")
            #expect(entities["heart_rate"]?["state_class"]?.text == "measurement")
            #expect(await gateway.until { gateway.sink.messages(on: "test/watch/ha/steps").last.map { Double(String(decoding: $0.payload, as: UTF8.self)) ?? 0 } ?? 0 >= 1200 })

            // The find button publishes to the watch's request/find, and the watch alerts.
            let find = try #require(entities["find"])
            #expect(find["p"]?.text == "button")
            #expect(find["command_topic"]?.text == "test/watch/request/find")
            await gateway.receive("test/watch/request/find", find["payload_press"]?.text ?? "")
            #expect(await gateway.until { await gateway.central.inspect(Self.address)["alerts"] == "1" })

            // A trigger per button: the event and its action together, as the event entity's types.
            for (key, subtype) in [("event_music_play", "music_play"), ("event_music_volume_up", "music_volume_up"),
                                   ("event_music_open", "music_open"), ("event_call_answer", "call_answer"),
                                   ("event_call_reject", "call_reject"), ("event_call_mute", "call_mute")] {
                let trigger = entities[key]
                #expect(trigger?["p"]?.text == "device_automation", "\(key)")
                #expect(trigger?["topic"]?.text == "test/watch/event")
                #expect(trigger?["subtype"]?.text == subtype && trigger?["payload"]?.text == subtype)
                #expect(trigger?["value_template"]?.text?.contains("value_json.action") == true)
            }
            #expect(entities["event_music"] == nil, "no trigger for every music button at once")
            let types = entities["event"]?["event_types"]?.list?.compactMap(\.text) ?? []
            #expect(types.count == 11 && types.contains("music_next") && types.contains("call_mute"), "\(types)")
            #expect(types.last == "subscription_failed", "an event every device may raise, accepted without a trigger of its own")
        }
    }
}
