import Wearables

/// The firmware `update` entity: the version the device reports, the newest package named for its model in
/// `dfu.dir`, the update's progress from the state document, and (with `allow.dfu`) an install that sends
/// `request/dfu` with that package.
extension HomeAssistantDiscovery {
    func updateComponent(id: String, offer: FirmwareOffer?, installable: Bool) -> DiscoveryComponent {
        // Every key read only when the document has it: a document of a device never reached (`connecting`) has no
        // `firmware` yet, and an undefined key in a template is a warning in Home Assistant's log.
        let installed = "(value_json.firmware if value_json.firmware is defined else None)"
        let latest = offer.map { "'\($0.version)'" } ?? installed
        var options: [String: DeviceValue] = [
            "name": "Firmware", "device_class": "firmware", "entity_category": "config",
            "state_topic": .text(topics.device(id)),
            // `value_json['update']`, not `value_json.update`: Jinja looks attributes up before keys, and a dict's
            // `update` is its method.
            "value_template": .text("{{ {'installed_version': \(installed), 'latest_version': \(latest), "
                + "'in_progress': value_json['update'] is defined and value_json['update'].state == 'updating', "
                + "'update_percentage': value_json['update'].progress if value_json['update'] is defined "
                + "and value_json['update'].progress is defined else None} | to_json }}"),
            // The bridge alone: during an update the device is offline (it runs its bootloader), and that is when
            // the progress must show.
            "availability": [["topic": .text(topics.bridgeState), "value_template": "{{ value_json.state }}"]],
        ]
        if let offer, installable {
            options["command_topic"] = .text(topics.deviceRequest(id, command: "dfu"))
            var writer = JSONWriter(capacity: 128)
            writer.value(.object(["file": .text(offer.file), "sha256": .text(offer.sha256)]))
            options["payload_install"] = .text(String(decoding: writer.bytes, as: UTF8.self))
            options["release_summary"] = .text("\(offer.file) from the gateway's firmware folder")
        }
        return DiscoveryComponent("firmware", platform: "update", options)
    }
}
