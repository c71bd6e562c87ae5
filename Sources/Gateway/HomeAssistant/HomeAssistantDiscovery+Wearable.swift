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
    /// Commands the device accepts (its driver's and those the gateway runs for every driver).
    public var commands: Set<String>

    public init(id: String, address: String, driver: String, state: [String: DeviceValue] = [:], commands: Set<String> = []) {
        self.id = id
        self.address = address
        self.driver = driver
        self.state = state
        self.commands = commands
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

    /// The retained discovery document of one wearable, linked to the bridge.
    public func wearable(_ wearable: DiscoveredWearable) -> OutgoingMessage {
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
        if device["model"] == nil { device["model"] = .text("\(wearable.driver) wearable") }

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
        ]
        for button in Self.buttons where wearable.commands.contains(button.command) {
            components.append(DiscoveryComponent(button.command, platform: "button", [
                "name": .text(button.name), "icon": .text(button.icon),
                "command_topic": .text(topics.deviceRequest(wearable.id, command: button.command)), "payload_press": "{}",
            ]))
        }
        return document(objectID: objectID, device: device, components: components,
                        availability: [topics.bridgeState, topics.availability(wearable.id)], entityPrefix: wearable.id)
    }
}
