extension GoFITDriver {
    /// The band's scalar settings as controls, with the ranges and names `GoFITSettingsUpdate` accepts. The
    /// structured ones (alarms, idle alert, user profile, …) stay requests: a control per field would hide how
    /// they belong together.
    public static func settings(state: [String: DeviceValue]) -> [SettingDescription] {
        [
            SettingDescription("step_goal", name: "Step goal", kind: .number(
                range: Int64(GoFITSetting.stepGoalRange.lowerBound)...Int64(GoFITSetting.stepGoalRange.upperBound), step: 1,
                unit: "steps")),
            SettingDescription("unit_system", name: "Units", kind: .choice(options: GoFITUnitSystem.allCases.map(\.name))),
            SettingDescription("time_format", name: "Time format", kind: .choice(options: GoFITTimeFormat.allCases.map(\.name))),
            SettingDescription("handedness", name: "Worn on", kind: .choice(options: GoFITHandedness.allCases.map(\.name))),
            SettingDescription("language", name: "Language", kind: .choice(options: GoFITLanguage.allCases.map(\.name))),
            SettingDescription("auto_light_up", name: "Light up on wrist turn", kind: .toggle),
            SettingDescription("disconnect_alert", name: "Disconnect alert", kind: .toggle),
            SettingDescription("screen_lock", name: "Screen lock", kind: .toggle),
        ]
    }
}

extension GoFITDriver {
    /// The band's "find my phone" press, and the band asking to be paired (no key, or a key it no longer takes).
    public static var events: [String] { ["find_phone", "pairing_required"] }
    public static var recordKinds: Set<String> { ["steps", "sleep", "heart_rate", "spo2", "activity"] }
}
