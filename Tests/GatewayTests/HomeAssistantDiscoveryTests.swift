import Gateway
import MQTT
import Testing
import Wearables

/// Home Assistant's device-based discovery documents, as pure values: identity, device, availability, entities.
@Suite("Home Assistant discovery documents")
struct HomeAssistantDiscoveryTests {
    let discovery = HomeAssistantDiscovery(prefix: "homeassistant", topics: TopicLayout(base: "w2m"), gatewayID: "pi", version: "9.9.9")

    func object(_ message: OutgoingMessage) throws -> [String: DeviceValue] {
        try #require(try JSONParser.parse(message.payload, limits: JSONLimits(maximumBytes: 1 << 20)).object)
    }

    @Test("the bridge: one retained QoS 1 document with its device, origin, connection, version, scan and health")
    func bridgeDocument() throws {
        let message = discovery.bridge()
        #expect(message.topic == "homeassistant/device/wear2mqtt_pi_bridge/config")
        #expect(message.retain && message.qos == .atLeastOnce)
        let body = try object(message)
        #expect(body["dev"]?["identifiers"] == ["wear2mqtt_pi_bridge"])
        #expect(body["dev"]?["sw_version"]?.text == "9.9.9")
        #expect(body["o"]?["name"]?.text == "wear2mqtt")
        #expect(body["availability_mode"]?.text == "all")
        #expect(body["availability"]?.list?.compactMap { $0["topic"]?.text } == ["w2m/bridge/state"])
        let components = try #require(body["cmps"]?.object)
        #expect(components["connection"]?["p"]?.text == "binary_sensor")
        #expect(components["connection"]?["device_class"]?.text == "connectivity")
        #expect(components["scan"]?["command_topic"]?.text == "w2m/bridge/request/scan")
        #expect(components["adapters"]?["state_topic"]?.text == "w2m/bridge/info" && components["adapters"]?["json_attributes_topic"]?.text == "w2m/bridge/info")
        #expect(components["uptime"]?["entity_category"]?.text == "diagnostic")
        #expect(components["devices"]?["state_topic"]?.text == "w2m/bridge/devices")
        for (key, component) in components {
            #expect(component["unique_id"]?.text == "wear2mqtt_pi_bridge_\(key)")
            #expect(component["default_entity_id"]?.text?.hasPrefix("\(component["p"]?.text ?? "").wear2mqtt_pi_bridge_") == true)
            #expect(component["object_id"] == nil, "object_id is deprecated in favour of default_entity_id")
        }
    }

    @Test("a wearable: identified by gateway and address, linked to the bridge, with Device Information and both availabilities")
    func wearableDocument() throws {
        let strap = DiscoveredWearable(
            id: "strap", address: "C0:FF:EE:00:00:01", driver: "standard",
            state: ["manufacturer": "Polar Electro Oy", "model": "H10", "serial": "A1", "hardware": "1", "firmware": "3.1"],
            commands: ["refresh", "time_sync", "connect", "disconnect", "dfu"])
        let message = discovery.wearable(strap)
        #expect(message.topic == "homeassistant/device/wear2mqtt_pi_c0ffee000001/config")
        let body = try object(message)
        let device = try #require(body["dev"])
        #expect(device["identifiers"] == ["wear2mqtt_pi_c0ffee000001"])
        #expect(device["connections"] == [["bluetooth", "C0:FF:EE:00:00:01"]])
        #expect(device["via_device"]?.text == "wear2mqtt_pi_bridge")
        #expect(device["manufacturer"]?.text == "Polar Electro Oy" && device["model"]?.text == "H10")
        #expect(device["serial_number"]?.text == "A1" && device["hw_version"]?.text == "1" && device["sw_version"]?.text == "3.1")
        #expect(body["availability"]?.list?.compactMap { $0["topic"]?.text } == ["w2m/bridge/state", "w2m/strap/availability"])
        let components = try #require(body["cmps"]?.object)
        #expect(Set(components.keys) == ["connection", "last_seen", "battery", "rssi", "refresh", "time_sync", "connect", "disconnect"])
        // Signal strength: a diagnostic, off until the user turns it on.
        #expect(components["rssi"]?["enabled_by_default"] == false && components["rssi"]?["entity_category"]?.text == "diagnostic")
        #expect(components["rssi"]?["device_class"]?.text == "signal_strength" && components["rssi"]?["unit_of_measurement"]?.text == "dBm")
        // With ESPHome proxies (radios:), a Radio entity says which radio holds the device; none without.
        #expect(components["radio"] == nil)
        let withRadios = HomeAssistantDiscovery(prefix: "homeassistant", topics: TopicLayout(base: "w2m"), gatewayID: "pi", radios: true)
        let radioComponents = try #require(try object(withRadios.wearable(strap))["cmps"]?.object)
        #expect(radioComponents["radio"]?["value_template"]?.text?.contains("value_json.radio") == true)
        #expect(radioComponents["radio"]?["entity_category"]?.text == "diagnostic")
        #expect(components["battery"]?["unit_of_measurement"]?.text == "%" && components["battery"]?["device_class"]?.text == "battery")
        #expect(components["refresh"]?["command_topic"]?.text == "w2m/strap/request/refresh")
        #expect(components["battery"]?["default_entity_id"]?.text == "sensor.strap_battery")
        #expect(components["battery"]?["unique_id"]?.text == "wear2mqtt_pi_c0ffee000001_battery")
        // The connection stays available while the device is away, so it can show it disconnected.
        #expect(components["connection"]?["availability"]?.list?.count == 1)
    }

    @Test("a component that disappears is named once with its platform only, as Home Assistant removes it, then left out")
    func disappearingComponent() throws {
        let publisher = HomeAssistantPublisher(Configuration.HomeAssistantSection(), topics: TopicLayout(base: "w2m"), gatewayID: "pi",
                                               stateDirectory: nil)
        let nod = SettingDescription("gesture_head_nod", name: "Head nod detection", kind: .toggle, command: "configure")
        let tap = SettingDescription("gesture_double_tap", name: "Double tap detection", kind: .toggle, command: "configure")
        let frames = { (settings: [SettingDescription]) in
            DiscoveredWearable(id: "frames", address: "C0:FF:EE:00:00:05", driver: "bose", settings: settings)
        }
        #expect(publisher.devices([frames([tap, nod])]).count == 1)
        let changed = try #require(publisher.devices([frames([tap])]).first)
        let components = try #require(try object(changed)["cmps"]?.object)
        #expect(components["setting_gesture_head_nod"] == ["p": "switch"])
        #expect(components["setting_gesture_double_tap"]?["command_topic"]?.text == "w2m/frames/request/configure")
        #expect(publisher.devices([frames([tap])]).isEmpty, "the same document again is not news")
        let forced = try #require(publisher.devices([frames([tap])], force: true).first)
        #expect(try object(forced)["cmps"]?["setting_gesture_head_nod"] == nil, "named once, then left out")
    }

    @Test("a rename keeps every unique id: identity is the address, not the name")
    func renameKeepsIdentity() throws {
        let before = try object(discovery.wearable(DiscoveredWearable(id: "strap", address: "C0:FF:EE:00:00:01", driver: "standard")))
        let after = try object(discovery.wearable(DiscoveredWearable(id: "chest", address: "C0:FF:EE:00:00:01", driver: "standard")))
        let ids = { (body: [String: DeviceValue]) in body["cmps"]?.object?.values.compactMap { $0["unique_id"]?.text }.sorted() }
        #expect(ids(before) == ids(after))
        #expect(discovery.wearable(DiscoveredWearable(id: "chest", address: "C0:FF:EE:00:00:01", driver: "standard")).topic
                == discovery.wearable(DiscoveredWearable(id: "strap", address: "c0:ff:ee:00:00:01", driver: "standard")).topic)
    }

    @Test("removal is an empty retained payload on the device's config topic")
    func removal() {
        let message = discovery.removal(objectID: discovery.objectID(address: "C0:FF:EE:00:00:01"))
        #expect(message.topic == "homeassistant/device/wear2mqtt_pi_c0ffee000001/config")
        #expect(message.payload.isEmpty && message.retain)
    }

    @Test("no credentials or file paths ever reach a discovery document")
    func nothingSecret() {
        let texts = [discovery.bridge(), discovery.wearable(DiscoveredWearable(id: "strap", address: "C0:FF:EE:00:00:01", driver: "gofit",
                                                                                    commands: ["find", "dfu"]))]
            .map { String(decoding: $0.payload, as: UTF8.self) }
        for text in texts {
            #expect(!text.contains("password") && !text.contains("/var/") && !text.contains("state_dir"))
        }
    }

    @Test("fed sensors get their unit, class and calm topic; gestures and events become triggers and an event entity up front")
    func sensorsTriggersAndEvents() throws {
        let discovery = HomeAssistantDiscovery(prefix: "homeassistant", topics: TopicLayout(base: "w2m"), gatewayID: "pi",
                                               expireAfterSeconds: 600)
        let frames = DiscoveredWearable(id: "frames", address: "B0:5E:00:00:00:01", driver: "bose",
                                        sensors: ["heart_rate", "skin_temperature", "bvp"], gestures: ["double_tap", "head_nod"])
        let components = try #require(try object(discovery.wearable(frames))["cmps"]?.object)
        #expect(components["heart_rate"]?["unit_of_measurement"]?.text == "bpm")
        #expect(components["heart_rate"]?["state_class"]?.text == "measurement")
        #expect(components["heart_rate"]?["state_topic"]?.text == "w2m/frames/ha/heart_rate")
        #expect(components["heart_rate"]?["expire_after"]?.integer == 600)
        #expect(components["skin_temperature"]?["device_class"]?.text == "temperature")
        #expect(components["bvp"] == nil, "no entity for a raw waveform")
        let trigger = try #require(components["gesture_double_tap"])
        #expect(trigger["p"]?.text == "device_automation" && trigger["automation_type"]?.text == "trigger")
        #expect(trigger["topic"]?.text == "w2m/frames/gesture" && trigger["subtype"]?.text == "double_tap")
        #expect(trigger["payload"]?.text == "double_tap" && trigger["unique_id"] == nil)
        #expect(components["gesture"]?["p"]?.text == "event")
        #expect(components["gesture"]?["event_types"] == ["double_tap", "head_nod"])
        #expect(components["event"] == nil, "no events, no event entity")
    }

    @Test("settings become number, select and switch controls writing the driver's own request")
    func settingControls() throws {
        let band = DiscoveredWearable(id: "band", address: "C0:F1:70:00:00:01", driver: "gofit", settings: [
            SettingDescription("step_goal", name: "Step goal", kind: .number(range: 100...100_000, step: 1, unit: "steps")),
            SettingDescription("time_format", name: "Time format", kind: .choice(options: ["12", "24"])),
            SettingDescription("gesture_double_tap", name: "Double tap detection", kind: .toggle, command: "configure",
                               requestPath: ["gestures", "double_tap"], statePath: ["gestures", "double_tap"]),
        ])
        let components = try #require(try object(discovery.wearable(band))["cmps"]?.object)
        let goal = try #require(components["setting_step_goal"])
        #expect(goal["p"]?.text == "number" && goal["min"]?.integer == 100 && goal["max"]?.integer == 100_000)
        #expect(goal["command_topic"]?.text == "w2m/band/request/settings")
        #expect(goal["command_template"]?.text == #"{"step_goal":{{ value | int }}}"#)
        #expect(goal["value_template"]?.text?.contains("value_json['settings']['step_goal']") == true)
        #expect(goal["entity_category"]?.text == "config")
        let format = try #require(components["setting_time_format"])
        #expect(format["p"]?.text == "select" && format["options"] == ["12", "24"])
        #expect(format["command_template"]?.text == #"{"time_format":"{{ value }}"}"#)
        let tap = try #require(components["setting_gesture_double_tap"])
        #expect(tap["p"]?.text == "switch" && tap["command_topic"]?.text == "w2m/band/request/configure")
        #expect(tap["payload_on"]?.text == #"{"gestures":{"double_tap":true}}"#)
        #expect(tap["payload_off"]?.text == #"{"gestures":{"double_tap":false}}"#)
    }

    @Test("firmware: an update entity with the installed and offered versions; install only with allow.dfu")
    func updateEntity() throws {
        let offer = FirmwareOffer(file: "carexc-2.2.0.zip", sha256: "ab", version: "2.2.0", model: "carexc")
        let allowed = try #require(object(discovery.wearable(DiscoveredWearable(
            id: "band", address: "C0:F1:70:00:00:01", driver: "gofit", firmware: (offer, true))))["cmps"]?["firmware"])
        #expect(allowed["p"]?.text == "update" && allowed["device_class"]?.text == "firmware")
        #expect(allowed["command_topic"]?.text == "w2m/band/request/dfu")
        #expect(allowed["payload_install"]?.text == #"{"file":"carexc-2.2.0.zip","sha256":"ab"}"#)
        #expect(allowed["value_template"]?.text?.contains("'latest_version': '2.2.0'") == true)
        // Available while the band is in its bootloader (offline), so the progress shows.
        #expect(allowed["availability"]?.list?.compactMap { $0["topic"]?.text } == ["w2m/bridge/state"])
        let forbidden = try #require(object(discovery.wearable(DiscoveredWearable(
            id: "band", address: "C0:F1:70:00:00:01", driver: "gofit", firmware: (offer, false))))["cmps"]?["firmware"])
        #expect(forbidden["command_topic"] == nil, "no install without allow.dfu")
        let none = try object(discovery.wearable(DiscoveredWearable(id: "band", address: "C0:F1:70:00:00:01", driver: "gofit")))
        #expect(none["cmps"]?["firmware"] == nil, "no version reported, no update entity")
    }

    @Test("the offered package is the newest named for the device's model and newer than what it runs")
    func firmwareOffers() {
        let offers = [
            FirmwareOffer(file: "carexc-2.2.0.zip", sha256: "a", version: "2.2.0", model: "carexc"),
            FirmwareOffer(file: "carexc-2.10.0.zip", sha256: "b", version: "2.10.0", model: "carexc"),
            FirmwareOffer(file: "pinetime-1.14.0.zip", sha256: "c", version: "1.14.0", model: "pinetime"),
        ]
        #expect(FirmwareOffer.best(for: "Care-Xc", installed: "2.1.0", among: offers)?.file == "carexc-2.10.0.zip")
        #expect(FirmwareOffer.best(for: "Care-Xc", installed: "2.10.0", among: offers) == nil, "nothing newer")
        #expect(FirmwareOffer.best(for: "H10", installed: "1.0.0", among: offers) == nil, "nothing named for it")
        #expect(FirmwareOffer.best(for: nil, installed: "2.1.0", among: offers) == nil)
    }

    @Test("a device that syncs shows the sync's progress and its newest synced record")
    func syncEntities() throws {
        let band = DiscoveredWearable(id: "band", address: "C0:F1:70:00:00:01", driver: "gofit", commands: ["sync"])
        let components = try #require(try object(discovery.wearable(band))["cmps"]?.object)
        #expect(components["sync_progress"]?["unit_of_measurement"]?.text == "%")
        #expect(components["last_synced"]?["device_class"]?.text == "timestamp")
        let strap = DiscoveredWearable(id: "strap", address: "C0:FF:EE:00:00:01", driver: "standard", commands: ["refresh"])
        #expect(try object(discovery.wearable(strap))["cmps"]?["sync_progress"] == nil)
    }
}
