/// Settings as the JSON column of docs/protocols/gofit.md's table: the shape `request/settings` accepts, so
/// the state a consumer reads can be sent back as a request unchanged.
extension GoFITSetting {
    /// `"07:30"` for times, `["mon","fri"]` for days, names for enumerations, `height_cm` and `weight_kg` as
    /// numbers with one decimal, an alarm's missing date as `null`.
    public var deviceValue: DeviceValue {
        switch self {
        case .userProfile(let profile):
            return [
                "height_cm": .number(Double(profile.heightMillimeters) / 10),
                "weight_kg": .number(Double(profile.weightHectograms) / 10),
                "age": .integer(Int64(profile.age)),
                "stride_cm": .integer(Int64(profile.strideCentimeters)),
                "birthday": .text(profile.birthday.description),
                "gender": .text(profile.gender.name),
            ]
        case .stepGoal(let steps):
            return .integer(Int64(steps))
        case .unitSystem(let system):
            return .text(system.name)
        case .timeFormat(let format):
            return .text(format.name)
        case .handedness(let handedness):
            return .text(handedness.name)
        case .autoLightUp(let on), .disconnectAlert(let on), .screenLock(let on):
            return .flag(on)
        case .idleAlert(let alert):
            return [
                "enabled": .flag(alert.enabled),
                "days": alert.days.deviceValue,
                "start": .text(alert.start.description),
                "end": .text(alert.end.description),
                "interval_min": .integer(Int64(alert.intervalMinutes)),
            ]
        case .alarms(let alarms):
            return .list(alarms.map(\.deviceValue))
        case .heartRateTiming(let timing):
            return [
                "enabled": .flag(timing.enabled),
                "start": .text(timing.start.description),
                "end": .text(timing.end.description),
                "interval_min": .integer(Int64(timing.intervalMinutes)),
            ]
        case .doNotDisturb(let dnd):
            return ["enabled": .flag(dnd.enabled), "start": .text(dnd.start.description), "end": .text(dnd.end.description)]
        case .language(let language):
            return .text(language.name)
        case .findMyBand(let find):
            return ["vibration": .flag(find.vibration), "seconds": .integer(Int64(find.seconds)), "repeat": .flag(find.repeats)]
        case .findMyPhone(let find):
            return ["enabled": .flag(find.enabled), "vibration_s": .integer(Int64(find.vibrationSeconds)), "sound": .flag(find.sound)]
        case .heartRateWarning(let warning):
            return ["enabled": .flag(warning.enabled), "max_bpm": .integer(Int64(warning.maxBPM)),
                    "min_bpm": .integer(Int64(warning.minBPM))]
        }
    }
}

extension GoFITAlarm {
    /// One element of `alarms`: `{"id":0,"enabled":true,"category":"wake_up","days":["mon"],"date":null,
    /// "time":"07:00","active":false,"text":""}`.
    public var deviceValue: DeviceValue {
        [
            "id": .integer(Int64(id)),
            "enabled": .flag(enabled),
            "category": .text(category.name),
            "days": days.deviceValue,
            "date": date.map { .text($0.description) } ?? .null,
            "time": .text(time.description),
            "active": .flag(active),
            "text": .text(text),
        ]
    }
}

extension GoFITWeekdays {
    public var deviceValue: DeviceValue { .list(names.map { .text($0) }) }
}

extension GoFITSettingsUpdate {
    /// The `settings` object of the retained state: each setting under its key.
    public static func settingsObject(_ settings: [GoFITSetting]) -> [String: DeviceValue] {
        var object: [String: DeviceValue] = [:]
        for setting in settings { object[setting.id.key] = setting.deviceValue }
        return object
    }
}
