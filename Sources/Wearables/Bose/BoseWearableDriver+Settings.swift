extension BoseWearableDriver {
    /// The device's sensors and gestures as controls, from the capabilities its state shows (read on every
    /// connection): one switch per sensor stream and per gesture, and the period the enabled sensors share,
    /// offered only among the periods every sensor accepts. The device's limit on sensors running at once
    /// (`capabilities.max_active_sensors`) is still checked by `configure`, which refuses one switch too many.
    public static func settings(state: [String: DeviceValue]) -> [SettingDescription] {
        let sensors = state["capabilities"]?["sensors"]?.object ?? [:]
        let gestures = state["capabilities"]?["gestures"]?.list?.compactMap(\.text) ?? []
        var settings: [SettingDescription] = []
        let periods = sensors.values.map { Set($0["periods_ms"]?.list?.compactMap(\.integer) ?? []) }
        if let first = periods.first {
            let common = periods.dropFirst().reduce(first) { $0.intersection($1) }.sorted()
            if !common.isEmpty {
                settings.append(SettingDescription("sensor_period", name: "Sensor period (ms)", kind: .numberChoice(options: common, unit: "ms"),
                                                   command: "configure", requestPath: ["period_ms"], statePath: ["sensor_period_ms"]))
            }
        }
        for sensor in sensors.keys.sorted() {
            settings.append(SettingDescription("sensor_\(sensor)", name: label(sensor) + " stream", kind: .toggle, command: "configure",
                                               requestPath: ["sensors", sensor, "enabled"], statePath: ["sensors", sensor, "enabled"]))
        }
        for gesture in gestures {
            settings.append(SettingDescription("gesture_\(gesture)", name: label(gesture) + " detection", kind: .toggle,
                                               command: "configure", requestPath: ["gestures", gesture], statePath: ["gestures", gesture]))
        }
        return settings
    }

    /// `double_tap` → `Double tap`.
    private static func label(_ name: String) -> String {
        let words = name.replacing("_", with: " ")
        return words.prefix(1).uppercased() + words.dropFirst()
    }
}
