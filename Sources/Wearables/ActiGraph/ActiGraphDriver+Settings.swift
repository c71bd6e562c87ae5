extension ActiGraphDriver {
    /// The Link's streams as controls, each one `request/configure` accepts on its own: the raw accelerometer
    /// stream and its rate (the SDK's 30–100 Hz), and each IMU sensor's switch.
    public static func settings(state: [String: DeviceValue]) -> [SettingDescription] {
        let rates = ActiGraphStreamSettings.rawRates
        var settings = [
            SettingDescription("raw_stream", name: "Raw acceleration stream", kind: .toggle, command: "configure",
                               requestPath: ["raw", "stream"], statePath: ["sensors", "accelerometer", "raw_stream"]),
            SettingDescription("raw_rate", name: "Raw acceleration rate", kind: .number(
                range: Int64(rates.lowerBound)...Int64(rates.upperBound), step: 1, unit: "Hz"), command: "configure",
                               requestPath: ["sensors", "accelerometer", "rate_hz"], statePath: ["sensors", "accelerometer", "rate_hz"]),
        ]
        for sensor in ActiGraphIMUSensor.allCases {
            settings.append(SettingDescription(
                "imu_\(sensor.name)", name: "IMU \(sensor.name)", kind: .toggle, command: "configure", requestPath: ["imu", sensor.name],
                statePath: sensor == .accelerometer ? ["sensors", "accelerometer", "imu"] : ["sensors", sensor.name, "enabled"]))
        }
        return settings
    }
}
