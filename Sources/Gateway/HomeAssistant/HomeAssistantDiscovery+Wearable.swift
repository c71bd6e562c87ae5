import MQTT
import Wearables

/// What the discovery of one wearable is built from: who it is (from the device list and its state document) and
/// what it can do (its driver's commands).
public struct DiscoveredWearable: Sendable, Equatable {
    /// The device's id in topics (`strap`), also the stem of its default entity ids.
    public var id: String
    public var address: String
    public var driver: String
    /// The retained state document's fields: manufacturer, model, serial, hardware, firmware.
    public var state: [String: DeviceValue]
    /// The name the device advertises (BlueZ's Name or Alias), the model shown when it has no Device Information.
    public var advertisedName: String?
    /// Commands the device accepts (its driver's and those the gateway runs for every driver).
    public var commands: Set<String>
    /// Entity keys fed by `EntityStateFeed` on `<base>/<id>/ha/<key>` (`heart_rate`, `spo2`, …).
    public var sensors: Set<String>
    /// Gestures the device can make (`<id>/gesture`), from its capabilities.
    public var gestures: [String]
    /// Events the device can raise (`<id>/event`): a button, a find-my-phone, a spot check.
    public var events: [String]
    /// The actions of events that carry one (`music`: `play`, `next`, …): a trigger each instead of one per event.
    public var eventActions: [String: [String]]
    /// Settings shown as controls.
    public var settings: [SettingDescription]
    /// Yes/no facts of the state shown as binary sensors, when the device's capabilities say it has them.
    public var statusFlags: [StatusFlagDescription]
    /// Fitness summary entities (`FitnessSummary.keys`) for a device that syncs history.
    public var summaries: Set<String>
    /// Whether the device runs firmware the gateway can update (it reported a version), and what it would install:
    /// nil when no newer package is named for it. `installable`: `allow.dfu` is on.
    public var firmware: (offer: FirmwareOffer?, installable: Bool)?

    public init(id: String, address: String, driver: String, state: [String: DeviceValue] = [:], commands: Set<String> = [],
                sensors: Set<String> = [], gestures: [String] = [], events: [String] = [], eventActions: [String: [String]] = [:],
                settings: [SettingDescription] = [], statusFlags: [StatusFlagDescription] = [], summaries: Set<String> = [],
                firmware: (offer: FirmwareOffer?, installable: Bool)? = nil) {
        self.id = id
        self.address = address
        self.driver = driver
        self.state = state
        self.commands = commands
        self.sensors = sensors
        self.gestures = gestures
        self.events = events
        self.eventActions = eventActions
        self.settings = settings
        self.statusFlags = statusFlags
        self.summaries = summaries
        self.firmware = firmware
    }

    public static func == (lhs: DiscoveredWearable, rhs: DiscoveredWearable) -> Bool {
        lhs.id == rhs.id && lhs.address == rhs.address && lhs.driver == rhs.driver && lhs.state == rhs.state
            && lhs.advertisedName == rhs.advertisedName && lhs.commands == rhs.commands && lhs.sensors == rhs.sensors && lhs.gestures == rhs.gestures
            && lhs.events == rhs.events && lhs.eventActions == rhs.eventActions && lhs.settings == rhs.settings && lhs.statusFlags == rhs.statusFlags && lhs.summaries == rhs.summaries && lhs.firmware?.offer == rhs.firmware?.offer
            && lhs.firmware?.installable == rhs.firmware?.installable
    }
}

extension HomeAssistantDiscovery {
    /// Commands shown as buttons, in this order, with their names and icons.
    static let buttons: [(command: String, name: String, icon: String)] = [
        ("find", "Find", "mdi:vibrate"),
        ("refresh", "Refresh", "mdi:refresh"),
        ("sync", "Sync", "mdi:sync"),
        ("time_sync", "Set time", "mdi:clock-check-outline"),
        ("connect", "Connect", "mdi:bluetooth-connect"),
        ("disconnect", "Disconnect", "mdi:bluetooth-off"),
    ]

    /// Entities fed by `EntityStateFeed`: key → name, unit, device class.
    static let sensorEntities: [String: (name: String, unit: String, deviceClass: String?)] = [
        "heart_rate": ("Heart rate", "bpm", nil),
        "spo2": ("SpO2", "%", nil),
        "pulse_rate": ("Pulse rate", "bpm", nil),
        "temperature": ("Temperature", "°C", "temperature"),
        "skin_temperature": ("Skin temperature", "°C", "temperature"),
        "eda": ("Electrodermal activity", "µS", nil),
        "ibi": ("Inter-beat interval", "ms", "duration"),
        "running_speed": ("Running speed", "m/s", "speed"),
        "running_cadence": ("Running cadence", "steps/min", nil),
        "cycling_speed": ("Cycling speed", "m/s", "speed"),
        "cycling_cadence": ("Cycling cadence", "rpm", nil),
        "hrv_rmssd": ("HRV RMSSD", "ms", "duration"),
        "hrv_sdnn": ("HRV SDNN", "ms", "duration"),
        "hrv_mean_hr": ("HRV mean heart rate", "bpm", nil),
        "steps": ("Steps", "steps", nil),
    ]

    /// Entities whose state class is not `measurement`: a watch's steps today only grow, back to 0 at midnight.
    static let stateClasses: [String: String] = ["steps": "total_increasing"]

    /// The retained discovery document of one wearable, linked to the bridge.
    public func wearable(_ wearable: DiscoveredWearable) -> OutgoingMessage { wearableDocument(wearable).message }

    /// The document, and the platform of each of its components by key (what a later document must remove if it
    /// lacks one). `removed`: components of an earlier document gone from this one, sent once as `{"p": platform}`,
    /// as Home Assistant's device discovery asks — dropping them silently would leave orphaned entities.
    func wearableDocument(_ wearable: DiscoveredWearable,
                          removed: [String: String] = [:]) -> (message: OutgoingMessage, platforms: [String: String]) {
        let objectID = objectID(address: wearable.address)
        let stateTopic = topics.device(wearable.id)
        var device: [String: DeviceValue] = [
            "identifiers": [.text(objectID)],
            "connections": [["bluetooth", .text(wearable.address)]],
            "name": .text(wearable.id),
            "via_device": .text(bridgeObjectID),
        ]
        for (field, key) in [("manufacturer", "manufacturer"), ("model", "model"), ("serial", "serial_number"),
                             ("hardware", "hw_version"), ("firmware", "sw_version")] {
            if let text = wearable.state[field]?.text, !text.isEmpty { device[key] = .text(text) }
        }
        // No Device Information: the name it advertises, never a driver's internal name.
        if device["model"] == nil, let advertised = wearable.advertisedName, !advertised.isEmpty { device["model"] = .text(advertised) }

        var components = [
            // Whether the link is up; it stays available while the device is away, so it can say so.
            DiscoveryComponent("connection", platform: "binary_sensor", [
                "name": "Connection", "device_class": "connectivity", "state_topic": .text(stateTopic),
                "value_template": "{{ 'ON' if value_json.connection == 'connected' else 'OFF' }}",
                "availability": [["topic": .text(topics.bridgeState), "value_template": "{{ value_json.state }}"]],
            ]).diagnostic(),
            DiscoveryComponent("last_seen", platform: "sensor", [
                "name": "Last seen", "device_class": "timestamp", "state_topic": .text(stateTopic),
                "value_template": "{{ (value_json.last_seen / 1000) | timestamp_custom('%Y-%m-%dT%H:%M:%S+00:00', false) if value_json.last_seen is defined else None }}",
                "availability": [["topic": .text(topics.bridgeState), "value_template": "{{ value_json.state }}"]],
            ]).diagnostic(),
            DiscoveryComponent("battery", platform: "sensor", [
                "name": "Battery", "device_class": "battery", "unit_of_measurement": "%", "state_class": "measurement",
                "state_topic": .text(stateTopic),
                "value_template": "{{ value_json.battery if value_json.battery is defined else None }}",
            ]).diagnostic(),
            // BlueZ reports it from advertisements it hears while discovering; a connected device rarely advertises.
            DiscoveryComponent("rssi", platform: "sensor", [
                "name": "Signal strength", "device_class": "signal_strength", "unit_of_measurement": "dBm",
                "state_class": "measurement", "state_topic": .text(stateTopic),
                "value_template": "{{ value_json.rssi if value_json.rssi is defined else None }}",
            ]).diagnostic().disabledByDefault(),
        ]
        if radios {
            // Which radio holds the device — the local adapter or an ESPHome proxy (docs/radios.md).
            components.append(DiscoveryComponent("radio", platform: "sensor", [
                "name": "Radio", "icon": "mdi:access-point", "state_topic": .text(stateTopic),
                "value_template": "{{ value_json.radio if value_json.radio is defined else None }}",
            ]).diagnostic())
        }
        if roaming {
            // Which room's gateway holds the device (docs/roaming.md): a worn device gives room presence.
            let presence = topics.device(wearable.id) + "/presence"
            components.append(DiscoveryComponent("presence", platform: "sensor", [
                "name": "Room", "icon": "mdi:map-marker", "state_topic": .text(presence),
                "value_template": "{{ value_json.room if value_json.room else value_json.gateway }}",
                "json_attributes_topic": .text(presence),
                "availability": [["topic": .text(topics.bridgeState), "value_template": "{{ value_json.state }}"]],
            ]))
        }
        for button in Self.buttons where wearable.commands.contains(button.command) {
            components.append(DiscoveryComponent(button.command, platform: "button", [
                "name": .text(button.name), "icon": .text(button.icon),
                "command_topic": .text(topics.deviceRequest(wearable.id, command: button.command)), "payload_press": "{}",
            ]))
        }
        for key in wearable.sensors.sorted() {
            guard let entity = Self.sensorEntities[key] else { continue }
            var options: [String: DeviceValue] = [
                "name": .text(entity.name), "unit_of_measurement": .text(entity.unit),
                "state_class": .text(Self.stateClasses[key] ?? "measurement"),
                "state_topic": .text(entityTopic(wearable.id, key)),
            ]
            if let deviceClass = entity.deviceClass { options["device_class"] = .text(deviceClass) }
            if expireAfterSeconds > 0 { options["expire_after"] = .integer(Int64(expireAfterSeconds)) }
            components.append(DiscoveryComponent(key, platform: "sensor", options))
        }
        if wearable.commands.contains("sync") { components += syncComponents(stateTopic: stateTopic) }
        for flag in wearable.statusFlags where Self.value(at: flag.capabilityPath, in: wearable.state)?.flag == true {
            // A fact its description names (a Polar H10 recording on itself), from the state document.
            var options: [String: DeviceValue] = [
                "name": .text(flag.name), "state_topic": .text(stateTopic),
                "value_template": .text("{{ 'ON' if \(Self.definedTest(flag.statePath)) and value_json.\(flag.statePath.joined(separator: ".")) else 'OFF' }}"),
            ]
            if let icon = flag.icon { options["icon"] = .text(icon) }
            components.append(DiscoveryComponent(flag.key, platform: "binary_sensor", options))
        }
        components += summaryComponents(wearable.summaries, id: wearable.id)
        components += settingComponents(wearable.settings, id: wearable.id)
        if let firmware = wearable.firmware {
            components.append(updateComponent(id: wearable.id, offer: firmware.offer, installable: firmware.installable))
        }
        components += triggers(wearable.gestures, kind: "gesture", topic: topics.gesture(wearable.id), field: "gesture")
        // The event entity also lists the events every device may raise (a refused subscription), so Home Assistant
        // takes them instead of logging an invalid event type; they get no automation trigger of their own.
        components += triggers(wearable.events, kind: "event", topic: topics.event(wearable.id), field: "event",
                               actions: wearable.eventActions, alsoAccepted: DeviceLink.commonEvents)
        let message = document(objectID: objectID, device: device, components: components,
                               availability: [topics.bridgeState, topics.availability(wearable.id)], entityPrefix: wearable.id,
                               removed: removed)
        return (message, Dictionary(components.map { ($0.key, $0.platform) }) { first, _ in first })
    }

    /// The value at `path` in a state document.
    static func value(at path: [String], in state: [String: DeviceValue]) -> DeviceValue? {
        guard let first = path.first else { return nil }
        return path.dropFirst().reduce(state[first]) { value, key in value?[key] }
    }

    /// A Jinja test that every level of `path` is in the document (`value_json.a is defined and value_json.a.b is defined`).
    static func definedTest(_ path: [String]) -> String {
        path.indices.map { "value_json.\(path[...$0].joined(separator: ".")) is defined" }.joined(separator: " and ")
    }

    /// A device that syncs history (GoFIT, ActiGraph): how far the running sync is, and when the newest synced
    /// record was taken.
    func syncComponents(stateTopic: String) -> [DiscoveryComponent] {
        [
            DiscoveryComponent("sync_progress", platform: "sensor", [
                "name": "Sync progress", "unit_of_measurement": "%", "state_topic": .text(stateTopic), "icon": "mdi:sync",
                "value_template": "{{ value_json.sync.progress if value_json.sync is defined and value_json.sync.progress is defined else None }}",
            ]).diagnostic(),
            DiscoveryComponent("last_synced", platform: "sensor", [
                "name": "Newest synced record", "device_class": "timestamp", "state_topic": .text(stateTopic),
                "value_template": .text("{{ (value_json.sync.last_ts / 1000) | timestamp_custom('%Y-%m-%dT%H:%M:%S+00:00', false) "
                    + "if value_json.sync is defined and value_json.sync.last_ts is defined else None }}"),
            ]),
        ]
    }

    /// `<base>/<id>/ha/<key>`: where `EntityStateFeed` publishes an entity's calm value.
    public func entityTopic(_ id: String, _ key: String) -> String { "\(topics.device(id))/ha/\(key)" }

    /// Gestures or events as Home Assistant knows them, published up front from the device's capabilities rather
    /// than after the first press: one device trigger per type, and one `event` entity listing them all.
    func triggers(_ names: [String], kind: String, topic: String, field: String,
                  actions: [String: [String]] = [:], alsoAccepted: [String] = []) -> [DiscoveryComponent] {
        guard !names.isEmpty else { return [] }
        // An event with actions is a type per action (`music_play`), told apart by both fields.
        let types = names.flatMap { name in actions[name].map { $0.map { "\(name)_\($0)" } } ?? [name] }
        let withActions = names.contains { actions[$0] != nil }
        let typeTemplate = withActions
            ? "(value_json.\(field) ~ '_' ~ value_json.action) if value_json.action is defined else value_json.\(field)"
            : "value_json.\(field)"
        var components = types.map { name in
            DiscoveryComponent("\(kind)_\(name)", platform: "device_automation", [
                "automation_type": "trigger", "topic": .text(topic), "type": .text(kind), "subtype": .text(name),
                "value_template": .text("{{ \(typeTemplate) }}"), "payload": .text(name),
            ])
        }
        components.append(DiscoveryComponent(kind, platform: "event", [
            "name": .text(kind == "gesture" ? "Gesture" : "Event"), "state_topic": .text(topic),
            "event_types": .list((types + alsoAccepted.filter { !types.contains($0) }).map(DeviceValue.text)),
            "value_template": .text("{{ {'event_type': \(withActions ? "(" + typeTemplate + ")" : typeTemplate)} | to_json }}"),
        ]))
        return components
    }
}

extension DiscoveredWearable {
    /// What the gateway knows of a managed device, as discovery needs it: the driver's commands and the gateway's
    /// own, the sensors seen so far (as the calm entities they feed), the gestures its capabilities list, and the
    /// events its driver raises.
    init(device: ManagedDevice, driver: (any WearableDriver.Type)?, document: DeviceStateDocument, sensorsSeen: Set<String>,
         offers: [FirmwareOffer], allowDFU: Bool) {
        var sensors: Set<String> = []
        for sensor in sensorsSeen { sensors.formUnion(Self.entityKeys[sensor] ?? []) }
        let gestures = document.fields["capabilities"]?["gestures"]?.list?.compactMap(\.text) ?? []
        self.init(id: device.id, address: device.address, driver: device.driver, state: document.fields,
                  commands: driver?.commands ?? [], sensors: sensors,
                  gestures: gestures, events: driver?.driverDescription.events.filter { $0.service == nil }.map(\.name) ?? [], eventActions: driver?.eventActions ?? [:], settings: driver?.settings(state: document.fields) ?? [],
                  statusFlags: driver?.driverDescription.statusFlags ?? [],
                  summaries: FitnessSummary.keys(recordKinds: driver?.recordKinds ?? []),
                  firmware: document.fields["firmware"]?.text.map { installed in
                      (FirmwareOffer.best(for: document.fields["model"]?.text, installed: installed, among: offers), allowDFU)
                  })
    }

    /// The calm entities each sensor stream feeds (`EntityStateFeed.forEachValue(of:_:)`).
    static let entityKeys: [String: [String]] = [
        "heart_rate": ["heart_rate"], "spo2": ["spo2", "pulse_rate"], "temperature": ["temperature"],
        "skin_temperature": ["skin_temperature"], "eda": ["eda"], "ibi": ["ibi"],
        "running": ["running_speed", "running_cadence"], "cycling": ["cycling_speed", "cycling_cadence"],
        "hrv": ["hrv_rmssd", "hrv_sdnn", "hrv_mean_hr"], "ppi": ["ibi"], "steps": ["steps"],
    ]
}
