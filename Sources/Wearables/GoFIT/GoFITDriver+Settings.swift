extension GoFITDriver {
    /// The band's scalar settings as controls, with the ranges and names `GoFITSettingsUpdate` accepts. The
    /// structured ones (alarms, idle alert, user profile, …) stay requests: a control per field would hide how
    /// they belong together.
    static var settingsOfEveryBand: [SettingDescription] {
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
