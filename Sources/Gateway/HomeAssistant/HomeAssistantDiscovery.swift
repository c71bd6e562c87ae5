import MQTT
import Wearables

/// Home Assistant's MQTT device-based discovery for the bridge and its wearables: one retained
/// `<prefix>/device/<object_id>/config` per device, carrying the device (`dev`), the origin (`o`), availability and
/// every entity (`cmps`). Pure: it builds messages from what it is told and keeps nothing.
///
/// Identity is by gateway id and Bluetooth address, never by the user's name for the device, so renaming a device
/// keeps its entities and their history; the name only sets the `default_entity_id` an entity is created with.
public struct HomeAssistantDiscovery: Sendable {
    public let prefix: String
    public let topics: TopicLayout
    public let gatewayID: String
    public let version: String
    /// `homeassistant.expire_after_s`: 0 leaves sensors without `expire_after`.
    public let expireAfterSeconds: Int

    /// The gateway is one of a site (docs/roaming.md): every wearable gets a Room entity from its `presence`.
    public let roaming: Bool
    /// The gateway has ESPHome proxies (`radios:`): every wearable gets a Radio entity (which radio holds it).
    public let radios: Bool

    public init(prefix: String, topics: TopicLayout, gatewayID: String, version: String = Wear2MQTTVersion.current,
                expireAfterSeconds: Int = 0, roaming: Bool = false, radios: Bool = false) {
        self.prefix = prefix
        self.topics = topics
        self.gatewayID = gatewayID
        self.version = version
        self.expireAfterSeconds = expireAfterSeconds
        self.roaming = roaming
        self.radios = radios
    }

    // MARK: Identity

    /// Whose devices these are: the gateway's id, or in a site the site's (its base topic), so a wearable that
    /// roams keeps one identity and its entities' history whichever gateway announces it.
    public var owner: String {
        guard roaming else { return gatewayID }
        return "site_" + String(topics.base.lowercased().unicodeScalars.map { scalar in
            ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) ? Character(scalar) : "_"
        })
    }

    /// The bridge's `object_id` and device identifier (in a site, the site's bridge, announced by its referee).
    public var bridgeObjectID: String { "wear2mqtt_\(owner)_bridge" }

    /// A wearable's `object_id` and device identifier: gateway (or site) and address, lower case without colons.
    public func objectID(address: String) -> String {
        "wear2mqtt_\(owner)_" + address.replacing(":", with: "").lowercased()
    }

    public func configTopic(objectID: String) -> String { "\(prefix)/device/\(objectID)/config" }

    // MARK: Documents

    /// The retained discovery document of the bridge.
    public func bridge() -> OutgoingMessage {
        let objectID = bridgeObjectID
        let state = topics.bridgeState
        var components = [
            DiscoveryComponent("connection", platform: "binary_sensor", [
                "name": "Connection", "device_class": "connectivity", "state_topic": .text(state),
                "value_template": "{{ value_json.state }}", "payload_on": "online", "payload_off": "offline",
            ]).diagnostic(),
            DiscoveryComponent("version", platform: "sensor", [
                "name": "Version", "state_topic": .text(topics.bridgeInfo), "value_template": "{{ value_json.version }}",
                "icon": "mdi:information-outline",
            ]).diagnostic(),
            DiscoveryComponent("devices", platform: "sensor", [
                "name": "Devices", "state_topic": .text(topics.bridgeDevices), "value_template": "{{ value_json | count }}",
                "state_class": "measurement", "icon": "mdi:watch-variant",
            ]),
            // Powered adapters, with each adapter (id, address, powered, discovering) as attributes.
            DiscoveryComponent("adapters", platform: "sensor", [
                "name": "Adapters powered", "state_topic": .text(topics.bridgeInfo), "icon": "mdi:bluetooth",
                "value_template": "{{ value_json.adapters | selectattr('powered') | list | count }}",
                "json_attributes_topic": .text(topics.bridgeInfo),
                "json_attributes_template": "{{ {'adapters': value_json.adapters, 'bluez_available': value_json.bluez_available} | tojson }}",
            ]).diagnostic(),
            // On while the radio watchdog reports any radio not working (docs/radios.md); each radio's state and
            // reason as attributes.
            DiscoveryComponent("radio_problem", platform: "binary_sensor", [
                "name": "Radio problem", "device_class": "problem", "state_topic": .text(topics.bridgeInfo),
                "value_template": "{{ 'ON' if value_json.adapters | selectattr('state', 'defined') | rejectattr('state', 'eq', 'ok') | list | count > 0 else 'OFF' }}",
                "payload_on": "ON", "payload_off": "OFF",
                "json_attributes_topic": .text(topics.bridgeInfo),
                "json_attributes_template": "{{ {'radios': value_json.adapters} | tojson }}",
            ]).diagnostic(),
            DiscoveryComponent("scan", platform: "button", [
                "name": "Scan", "command_topic": .text(topics.bridgeRequest("scan")), "payload_press": "{}",
                "icon": "mdi:bluetooth-settings",
            ]),
        ]
        components += Self.healthFigures.map { key, name, template, unit, deviceClass in
            var options: [String: DeviceValue] = [
                "name": .text(name), "state_topic": .text(topics.bridgeHealth), "value_template": .text(template),
                "state_class": "measurement",
            ]
            if let unit { options["unit_of_measurement"] = .text(unit) }
            if let deviceClass { options["device_class"] = .text(deviceClass) }
            return DiscoveryComponent(key, platform: "sensor", options).diagnostic()
        }
        let device: [String: DeviceValue] = [
            "identifiers": [.text(objectID)], "name": .text(roaming ? "wear2mqtt site \(topics.base)" : "wear2mqtt \(gatewayID)"), "manufacturer": "wear2mqtt",
            "model": "Bluetooth LE wearables bridge", "sw_version": .text(version),
        ]
        return document(objectID: objectID, device: device, components: components, availability: [state])
    }

    /// The empty retained payload that removes a device and its entities from Home Assistant.
    public func removal(objectID: String) -> OutgoingMessage {
        OutgoingMessage(topic: configTopic(objectID: objectID), payload: [], qos: .atLeastOnce, retain: true)
    }

    /// `bridge/health` figures shown as diagnostic sensors: key, name, template, unit, device class.
    static let healthFigures: [(String, String, String, String?, String?)] = [
        ("uptime", "Uptime", "{{ value_json.uptime_s }}", "s", "duration"),
        ("memory", "Memory", "{{ (value_json.rss_bytes / 1048576) | round(1) if value_json.rss_bytes is number else None }}",
         "MiB", "data_size"),
        ("mqtt_queued", "MQTT queued", "{{ value_json.mqtt.queued }}", nil, nil),
        ("mqtt_dropped", "MQTT dropped", "{{ value_json.mqtt.dropped }}", nil, nil),
        ("spool_pending", "Spool pending", "{{ value_json.mqtt.spool_pending }}", nil, nil),
    ]

    /// A whole document: device, origin, availability (every topic must say online: mode `all`), QoS 1, and the
    /// components with their unique ids and default entity ids.
    func document(objectID: String, device: [String: DeviceValue], components: [DiscoveryComponent],
                  availability: [String], entityPrefix: String? = nil, removed: [String: String] = [:]) -> OutgoingMessage {
        var cmps: [String: DeviceValue] = removed.mapValues { platform in ["p": .text(platform)] }
        for component in components {
            var options = component.options
            options["p"] = .text(component.platform)
            // A device trigger is not an entity: it has neither.
            if component.platform != "device_automation" {
                options["unique_id"] = .text("\(objectID)_\(component.key)")
                options["default_entity_id"] = .text("\(component.platform).\(entityPrefix ?? objectID)_\(component.key)")
            }
            cmps[component.key] = .object(options)
        }
        let body: [String: DeviceValue] = [
            "dev": .object(device),
            "o": ["name": "wear2mqtt", "sw": .text(version)],
            "availability": .list(availability.map { ["topic": .text($0), "value_template": "{{ value_json.state }}"] }),
            "availability_mode": "all",
            "qos": 1,
            "cmps": .object(cmps),
        ]
        var writer = JSONWriter(capacity: 1024)
        writer.value(.object(body))
        return OutgoingMessage(topic: configTopic(objectID: objectID), payload: writer.bytes, qos: .atLeastOnce, retain: true)
    }
}
