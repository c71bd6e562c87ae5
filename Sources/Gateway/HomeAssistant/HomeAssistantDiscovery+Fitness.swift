import Wearables

/// A device that syncs history (GoFIT, ActiGraph): its `FitnessSummary` as sensors, fed on `<base>/<id>/ha/<key>`.
extension HomeAssistantDiscovery {
    /// Entity key → name, unit, state class, device class, icon.
    static let summaryEntities: [String: (name: String, unit: String?, stateClass: String?, deviceClass: String?, icon: String)] = [
        "steps_today": ("Steps today", "steps", "total_increasing", nil, "mdi:walk"),
        "last_heart_rate": ("Synced heart rate", "bpm", "measurement", nil, "mdi:heart-pulse"),
        "last_spo2": ("Synced SpO2", "%", "measurement", nil, "mdi:water-percent"),
        "sleep_score": ("Sleep score", nil, "measurement", nil, "mdi:sleep"),
        "epoch_counts": ("Activity counts", "counts", "measurement", nil, "mdi:run"),
        "last_sync": ("Last sync", nil, nil, "timestamp", "mdi:sync"),
    ]

    func summaryComponents(_ keys: Set<String>, id: String) -> [DiscoveryComponent] {
        keys.sorted().compactMap { key in
            guard let entity = Self.summaryEntities[key] else { return nil }
            var options: [String: DeviceValue] = [
                "name": .text(entity.name), "icon": .text(entity.icon), "state_topic": .text(entityTopic(id, key)),
            ]
            if let unit = entity.unit { options["unit_of_measurement"] = .text(unit) }
            if let stateClass = entity.stateClass { options["state_class"] = .text(stateClass) }
            if let deviceClass = entity.deviceClass { options["device_class"] = .text(deviceClass) }
            if key == "last_sync" {
                options["value_template"] = "{{ (value | int / 1000) | timestamp_custom('%Y-%m-%dT%H:%M:%S+00:00', false) }}"
            }
            return DiscoveryComponent(key, platform: "sensor", options)
        }
    }
}
