extension PolarDriver {
    /// The streams the device offers as controls, from the capabilities its state shows (read on every
    /// connection): a switch per stream, and a choice of rate or range wherever the device offers more than one —
    /// only values the device listed, so nothing a control sends is refused. Choosing a rate or range of a stopped
    /// stream starts it (a stream named in `configure` runs unless `enabled` is false).
    public static func settings(state: [String: DeviceValue]) -> [SettingDescription] {
        let sensors = state["capabilities"]?["sensors"]?.object ?? [:]
        var settings: [SettingDescription] = []
        for stream in PolarStream.allCases where sensors[stream.rawValue] != nil {
            let name = stream.label
            settings.append(SettingDescription("sensor_\(stream.rawValue)", name: "\(name) stream", kind: .toggle, command: "configure",
                                               requestPath: ["sensors", stream.rawValue, "enabled"],
                                               statePath: ["sensors", stream.rawValue, "enabled"]))
            for (key, label, unit) in [("rate_hz", "rate", "Hz"), ("range", "range", nil as String?)] {
                let offered = sensors[stream.rawValue]?[key]?.list?.compactMap(\.integer) ?? []
                guard offered.count > 1 else { continue }
                settings.append(SettingDescription("\(stream.rawValue)_\(key)", name: "\(name) \(label)",
                                                   kind: .numberChoice(options: offered, unit: unit), command: "configure",
                                                   requestPath: ["sensors", stream.rawValue, key],
                                                   statePath: ["sensors", stream.rawValue, key]))
            }
        }
        return settings
    }
}

extension PolarStream {
    /// For people: "ECG", "Accelerometer".
    var label: String {
        switch self {
        case .ecg: "ECG"
        case .ppg: "PPG"
        case .ppi: "PPI"
        case .accelerometer: "Accelerometer"
        case .gyroscope: "Gyroscope"
        case .magnetometer: "Magnetometer"
        }
    }
}
