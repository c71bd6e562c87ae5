/// The 16 settings of a GoFIT band by their wire id (docs/protocols/gofit.md, "Settings"), in the order
/// `SETTINGS_READ` answers them.
public enum GoFITSettingID: UInt8, Sendable, CaseIterable, Comparable {
    case userProfile = 1
    case stepGoal
    case unitSystem
    case timeFormat
    case handedness
    case autoLightUp
    case disconnectAlert
    case idleAlert
    case alarms
    case heartRateTiming
    case doNotDisturb
    case language
    case findMyBand
    case findMyPhone
    case heartRateWarning
    case screenLock

    /// The key of `request/settings` and of `settings` in the retained state.
    public var key: String {
        switch self {
        case .userProfile: "user_profile"
        case .stepGoal: "step_goal"
        case .unitSystem: "unit_system"
        case .timeFormat: "time_format"
        case .handedness: "handedness"
        case .autoLightUp: "auto_light_up"
        case .disconnectAlert: "disconnect_alert"
        case .idleAlert: "idle_alert"
        case .alarms: "alarms"
        case .heartRateTiming: "heart_rate_timing"
        case .doNotDisturb: "do_not_disturb"
        case .language: "language"
        case .findMyBand: "find_my_band"
        case .findMyPhone: "find_my_phone"
        case .heartRateWarning: "heart_rate_warning"
        case .screenLock: "screen_lock"
        }
    }

    public init?(key: String) {
        guard let id = Self.allCases.first(where: { $0.key == key }) else { return nil }
        self = id
    }

    /// The value's length on the wire; nil for `alarms`, whose length follows its count and texts.
    public var valueLength: Int? {
        switch self {
        case .userProfile: 11
        case .stepGoal: 4
        case .unitSystem, .timeFormat, .handedness, .autoLightUp, .disconnectAlert, .language, .screenLock: 1
        case .idleAlert: 8
        case .alarms: nil
        case .heartRateTiming: 7
        case .doNotDisturb: 5
        case .findMyBand, .findMyPhone, .heartRateWarning: 3
        }
    }

    public static func < (lhs: GoFITSettingID, rhs: GoFITSettingID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One setting of a GoFIT band with its typed value.
///
/// `tlv()` and `init(tlv:)` are the wire codec of the table in docs/protocols/gofit.md: the driver decodes
/// `SETTINGS_READ` answers with them and the simulated band decodes `SETTINGS_WRITE` with them, so both check
/// the same ranges. `deviceValue` is the setting's JSON in the state. Checking an MQTT request, with messages
/// for a person, is `GoFITSettingsUpdate`'s job, not this type's.
public enum GoFITSetting: Sendable, Equatable {
    case userProfile(GoFITUserProfile)
    case stepGoal(UInt32)
    case unitSystem(GoFITUnitSystem)
    case timeFormat(GoFITTimeFormat)
    case handedness(GoFITHandedness)
    case autoLightUp(Bool)
    case disconnectAlert(Bool)
    case idleAlert(GoFITIdleAlert)
    case alarms([GoFITAlarm])
    case heartRateTiming(GoFITHeartRateTiming)
    case doNotDisturb(GoFITDoNotDisturb)
    case language(GoFITLanguage)
    case findMyBand(GoFITFindMyBand)
    case findMyPhone(GoFITFindMyPhone)
    case heartRateWarning(GoFITHeartRateWarning)
    case screenLock(Bool)

    public static let stepGoalRange: ClosedRange<UInt32> = 100...100_000
    /// A TLV's length is one byte: ten alarms fit only when their texts are short (docs/protocols/gofit.md
    /// lets each text be 32 bytes, which ten alarms cannot all use).
    public static let maximumValueLength = 255

    public var id: GoFITSettingID {
        switch self {
        case .userProfile: .userProfile
        case .stepGoal: .stepGoal
        case .unitSystem: .unitSystem
        case .timeFormat: .timeFormat
        case .handedness: .handedness
        case .autoLightUp: .autoLightUp
        case .disconnectAlert: .disconnectAlert
        case .idleAlert: .idleAlert
        case .alarms: .alarms
        case .heartRateTiming: .heartRateTiming
        case .doNotDisturb: .doNotDisturb
        case .language: .language
        case .findMyBand: .findMyBand
        case .findMyPhone: .findMyPhone
        case .heartRateWarning: .heartRateWarning
        case .screenLock: .screenLock
        }
    }

    /// What a new band (and the simulated one) starts with: plausible for an adult, alerts mostly off, one
    /// disabled wake-up alarm at 07:00 on weekdays. In id order.
    public static let factoryDefaults: [GoFITSetting] = [
        .userProfile(GoFITUserProfile(heightMillimeters: 1700, weightHectograms: 650, age: 30, strideCentimeters: 70,
                                      birthday: GoFITDate(year: 1995, month: 1, day: 1), gender: .male)),
        .stepGoal(8000),
        .unitSystem(.metric),
        .timeFormat(.twentyFourHour),
        .handedness(.left),
        .autoLightUp(true),
        .disconnectAlert(false),
        .idleAlert(GoFITIdleAlert(enabled: false, days: .weekdays, start: GoFITClockTime(hour: 9, minute: 0),
                                  end: GoFITClockTime(hour: 18, minute: 0), intervalMinutes: 60)),
        .alarms([GoFITAlarm(id: 0, enabled: false, category: .wakeUp, days: .weekdays, date: nil,
                            time: GoFITClockTime(hour: 7, minute: 0), active: false, text: "")]),
        .heartRateTiming(GoFITHeartRateTiming(enabled: false, start: GoFITClockTime(hour: 0, minute: 0),
                                              end: GoFITClockTime(hour: 23, minute: 59), intervalMinutes: 10)),
        .doNotDisturb(GoFITDoNotDisturb(enabled: false, start: GoFITClockTime(hour: 22, minute: 0),
                                        end: GoFITClockTime(hour: 7, minute: 0))),
        .language(.english),
        .findMyBand(GoFITFindMyBand(vibration: true, seconds: 10, repeats: false)),
        .findMyPhone(GoFITFindMyPhone(enabled: true, vibrationSeconds: 5, sound: true)),
        .heartRateWarning(GoFITHeartRateWarning(enabled: false, maxBPM: 180, minBPM: 40)),
        .screenLock(false),
    ]
}
