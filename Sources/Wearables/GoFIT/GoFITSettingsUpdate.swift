/// The whole check of `request/settings` for GoFIT bands (docs/protocols/gofit.md, "Settings"): a partial
/// update, merged onto the band's current values and refused with `INVALID_VALUE` naming the field before
/// anything is written, so a bad request changes nothing.
///
/// It does not read the band: the driver reads the current value of each setting the request touches and
/// passes them in. It does not know which settings a particular band model lacks; the band answers 21 for those.
public enum GoFITSettingsUpdate {
    /// The settings to write for `request`, in id order, one for each key given.
    ///
    /// - Every key must be a setting key. A scalar replaces the current value. An object may name only some of
    ///   its fields; the others are kept from `current[id]`, and when there is no current value every field is
    ///   required. `alarms` is a list that replaces all the band's alarms; an element whose `id` the band already
    ///   has is merged onto that alarm, a new one needs every field except `date` (none) and `text` (empty).
    /// - Every field is checked for its type and the table's range; unknown fields are refused.
    /// - `time_format` takes `"12"`/`"24"` or the numbers 12/24; `height_cm` and `weight_kg` take numbers and are
    ///   rounded to the band's 0.1 unit.
    public static func parse(
        _ request: [String: DeviceValue], current: [GoFITSettingID: GoFITSetting]
    ) throws(CommandError) -> [GoFITSetting] {
        for key in request.keys.sorted() where GoFITSettingID(key: key) == nil {
            throw .invalidValue(field: key, "unknown setting; known: \(GoFITSettingID.allCases.map(\.key).joined(separator: ", "))")
        }
        var settings: [GoFITSetting] = []
        for id in GoFITSettingID.allCases {
            guard let value = request[id.key] else { continue }
            let setting = try parse(id, value, current: current[id])
            try checkAsTheBandWould(setting)
            settings.append(setting)
        }
        return settings
    }

    private static func parse(_ id: GoFITSettingID, _ value: DeviceValue, current: GoFITSetting?) throws(CommandError) -> GoFITSetting {
        let key = id.key
        switch id {
        case .userProfile:
            return .userProfile(try userProfile(value, current: current?.currentUserProfile))
        case .stepGoal:
            return .stepGoal(try integer(value, key, GoFITSetting.stepGoalRange, unit: "steps"))
        case .unitSystem:
            return .unitSystem(try named(value, key, GoFITUnitSystem.self))
        case .timeFormat:
            if let hours = value.integer, let format = GoFITTimeFormat(rawValue: UInt8(clamping: hours)), Int64(format.rawValue) == hours {
                return .timeFormat(format)
            }
            return .timeFormat(try named(value, key, GoFITTimeFormat.self))
        case .handedness:
            return .handedness(try named(value, key, GoFITHandedness.self))
        case .autoLightUp:
            return .autoLightUp(try flag(value, key))
        case .disconnectAlert:
            return .disconnectAlert(try flag(value, key))
        case .idleAlert:
            return .idleAlert(try idleAlert(value, current: current?.currentIdleAlert))
        case .alarms:
            return .alarms(try alarms(value, current: current?.currentAlarms))
        case .heartRateTiming:
            return .heartRateTiming(try heartRateTiming(value, current: current?.currentHeartRateTiming))
        case .doNotDisturb:
            return .doNotDisturb(try doNotDisturb(value, current: current?.currentDoNotDisturb))
        case .language:
            return .language(try named(value, key, GoFITLanguage.self))
        case .findMyBand:
            return .findMyBand(try findMyBand(value, current: current?.currentFindMyBand))
        case .findMyPhone:
            return .findMyPhone(try findMyPhone(value, current: current?.currentFindMyPhone))
        case .heartRateWarning:
            return .heartRateWarning(try heartRateWarning(value, current: current?.currentHeartRateWarning))
        case .screenLock:
            return .screenLock(try flag(value, key))
        }
    }

    /// The request's fields are all checked above; this catches a field kept from a current value the band
    /// itself would refuse, so the write cannot fail with 18 for a reason the request does not show.
    private static func checkAsTheBandWould(_ setting: GoFITSetting) throws(CommandError) {
        do {
            try setting.validate()
        } catch {
            let field: String
            switch error {
            case .outOfRange(let name, _), .reservedValue(let name, _), .unknownIdentifier(let name, _): field = name
            case .truncated, .invalidUTF8: field = setting.id.key
            }
            throw .invalidValue(field: field, "the band's current value is out of range (\(error)); give this field in the request")
        }
    }

    // MARK: Objects

    private static func userProfile(_ value: DeviceValue, current: GoFITUserProfile?) throws(CommandError) -> GoFITUserProfile {
        let object = try ObjectFields(value, path: "user_profile",
                                      names: ["height_cm", "weight_kg", "age", "stride_cm", "birthday", "gender"],
                                      whenMissing: unknownCurrentValue("user_profile"))
        return GoFITUserProfile(
            heightMillimeters: try object.field("height_cm", current?.heightMillimeters) { (value, field) throws(CommandError) in
                try tenths(value, field, GoFITUserProfile.heightMillimeterRange, unit: "cm")
            },
            weightHectograms: try object.field("weight_kg", current?.weightHectograms) { (value, field) throws(CommandError) in
                try tenths(value, field, GoFITUserProfile.weightHectogramRange, unit: "kg")
            },
            age: try object.field("age", current?.age) { (value, field) throws(CommandError) in
                try integer(value, field, GoFITUserProfile.ageRange, unit: "years")
            },
            strideCentimeters: try object.field("stride_cm", current?.strideCentimeters) { (value, field) throws(CommandError) in
                try integer(value, field, GoFITUserProfile.strideCentimeterRange, unit: "cm")
            },
            birthday: try object.field("birthday", current?.birthday, date),
            gender: try object.field("gender", current?.gender) { (value, field) throws(CommandError) in
                try named(value, field, GoFITGender.self)
            })
    }

    private static func idleAlert(_ value: DeviceValue, current: GoFITIdleAlert?) throws(CommandError) -> GoFITIdleAlert {
        let object = try ObjectFields(value, path: "idle_alert", names: ["enabled", "days", "start", "end", "interval_min"],
                                      whenMissing: unknownCurrentValue("idle_alert"))
        return GoFITIdleAlert(
            enabled: try object.field("enabled", current?.enabled, flag),
            days: try object.field("days", current?.days, weekdays),
            start: try object.field("start", current?.start, time),
            end: try object.field("end", current?.end, time),
            intervalMinutes: try object.field("interval_min", current?.intervalMinutes) { (value, field) throws(CommandError) in
                try integer(value, field, GoFITIdleAlert.intervalMinuteRange, unit: "minutes")
            })
    }

    private static func heartRateTiming(_ value: DeviceValue, current: GoFITHeartRateTiming?) throws(CommandError) -> GoFITHeartRateTiming {
        let object = try ObjectFields(value, path: "heart_rate_timing", names: ["enabled", "start", "end", "interval_min"],
                                      whenMissing: unknownCurrentValue("heart_rate_timing"))
        return GoFITHeartRateTiming(
            enabled: try object.field("enabled", current?.enabled, flag),
            start: try object.field("start", current?.start, time),
            end: try object.field("end", current?.end, time),
            intervalMinutes: try object.field("interval_min", current?.intervalMinutes) { (value, field) throws(CommandError) in
                try integer(value, field, GoFITHeartRateTiming.intervalMinuteRange, unit: "minutes")
            })
    }

    private static func doNotDisturb(_ value: DeviceValue, current: GoFITDoNotDisturb?) throws(CommandError) -> GoFITDoNotDisturb {
        let object = try ObjectFields(value, path: "do_not_disturb", names: ["enabled", "start", "end"],
                                      whenMissing: unknownCurrentValue("do_not_disturb"))
        return GoFITDoNotDisturb(
            enabled: try object.field("enabled", current?.enabled, flag),
            start: try object.field("start", current?.start, time),
            end: try object.field("end", current?.end, time))
    }

    private static func findMyBand(_ value: DeviceValue, current: GoFITFindMyBand?) throws(CommandError) -> GoFITFindMyBand {
        let object = try ObjectFields(value, path: "find_my_band", names: ["vibration", "seconds", "repeat"],
                                      whenMissing: unknownCurrentValue("find_my_band"))
        return GoFITFindMyBand(
            vibration: try object.field("vibration", current?.vibration, flag),
            seconds: try object.field("seconds", current?.seconds) { (value, field) throws(CommandError) in
                try integer(value, field, GoFITFindMyBand.secondsRange, unit: "seconds")
            },
            repeats: try object.field("repeat", current?.repeats, flag))
    }

    private static func findMyPhone(_ value: DeviceValue, current: GoFITFindMyPhone?) throws(CommandError) -> GoFITFindMyPhone {
        let object = try ObjectFields(value, path: "find_my_phone", names: ["enabled", "vibration_s", "sound"],
                                      whenMissing: unknownCurrentValue("find_my_phone"))
        return GoFITFindMyPhone(
            enabled: try object.field("enabled", current?.enabled, flag),
            vibrationSeconds: try object.field("vibration_s", current?.vibrationSeconds) { (value, field) throws(CommandError) in
                try integer(value, field, GoFITFindMyPhone.vibrationSecondsRange, unit: "seconds")
            },
            sound: try object.field("sound", current?.sound, flag))
    }

    private static func heartRateWarning(_ value: DeviceValue, current: GoFITHeartRateWarning?) throws(CommandError) -> GoFITHeartRateWarning {
        let object = try ObjectFields(value, path: "heart_rate_warning", names: ["enabled", "max_bpm", "min_bpm"],
                                      whenMissing: unknownCurrentValue("heart_rate_warning"))
        let warning = GoFITHeartRateWarning(
            enabled: try object.field("enabled", current?.enabled, flag),
            maxBPM: try object.field("max_bpm", current?.maxBPM) { (value, field) throws(CommandError) in
                try integer(value, field, GoFITHeartRateWarning.maxBPMRange, unit: "bpm")
            },
            minBPM: try object.field("min_bpm", current?.minBPM) { (value, field) throws(CommandError) in
                try integer(value, field, GoFITHeartRateWarning.minBPMRange, unit: "bpm")
            })
        guard warning.minBPM < warning.maxBPM else {
            // Name the bound the request moved: the other one is the band's and may be what the user meant to keep.
            if object.fields["min_bpm"] != nil {
                throw .invalidValue(field: "heart_rate_warning.min_bpm",
                                    "\(warning.minBPM) bpm must be below max_bpm, which is \(warning.maxBPM)")
            }
            throw .invalidValue(field: "heart_rate_warning.max_bpm",
                                "\(warning.maxBPM) bpm must be above min_bpm, which is \(warning.minBPM)")
        }
        return warning
    }

    private static func alarms(_ value: DeviceValue, current: [GoFITAlarm]?) throws(CommandError) -> [GoFITAlarm] {
        guard let list = value.list else {
            throw .invalidValue(field: "alarms", "must be a list of alarm objects (at most \(GoFITAlarm.maximumCount)); [] removes every alarm")
        }
        guard list.count <= GoFITAlarm.maximumCount else {
            throw .invalidValue(field: "alarms", "a band holds at most \(GoFITAlarm.maximumCount) alarms; this list has \(list.count)")
        }
        let names = ["id", "enabled", "category", "days", "date", "time", "active", "text"]
        var alarms: [GoFITAlarm] = []
        for (index, element) in list.enumerated() {
            let path = "alarms[\(index)]"
            guard let idValue = element["id"] else {
                _ = try ObjectFields(element, path: path, names: names, whenMissing: "")
                throw .invalidValue(field: "\(path).id", "is required: an alarm is known by its id, 0 to 9")
            }
            let id = try integer(idValue, "\(path).id", GoFITAlarm.idRange, unit: "")
            if let other = alarms.firstIndex(where: { $0.id == id }) {
                throw .invalidValue(field: "\(path).id", "\(id) is also the id of alarms[\(other)]; each alarm needs its own id, 0 to 9")
            }
            let existing = current?.first { $0.id == id }
            let object = try ObjectFields(element, path: path, names: names,
                                          whenMissing: "is required for a new alarm: the band has no alarm \(id) to keep it from")
            let alarm = GoFITAlarm(
                id: id,
                enabled: try object.field("enabled", existing?.enabled, flag),
                category: try object.field("category", existing?.category) { (value, field) throws(CommandError) in
                    try named(value, field, GoFITAlarmCategory.self)
                },
                days: try object.field("days", existing?.days, weekdays),
                date: try object.field("date", existing.map(\.date) ?? .some(nil)) { (value, field) throws(CommandError) -> GoFITDate? in
                    if value == .null { return nil }
                    return try date(value, field)
                },
                time: try object.field("time", existing?.time, time),
                active: try object.field("active", existing?.active, flag),
                text: try object.field("text", existing?.text ?? "", alarmText))
            alarms.append(alarm)
        }
        let length = GoFITSetting.alarms(alarms).tlv().value.count
        guard length <= GoFITSetting.maximumValueLength else {
            throw .invalidValue(field: "alarms", "together these alarms take \(length) bytes, more than the \(GoFITSetting.maximumValueLength) the band's setting holds; shorten their texts (each alarm takes 12 bytes plus its text)")
        }
        return alarms
    }

    private static func unknownCurrentValue(_ key: String) -> String {
        "is required: the band's current \(key) is not known, so every field must be given"
    }

    // MARK: Fields

    /// The shared reader for one field's value, so type and range errors read as every request's do.
    private static func reader(_ value: DeviceValue, _ field: String) -> (RequestReader, String) {
        guard let dot = field.lastIndex(of: ".") else { return (RequestReader([field: value]), field) }
        let key = String(field[field.index(after: dot)...])
        return (RequestReader([key: value], path: String(field[...dot])), key)
    }

    private static func flag(_ value: DeviceValue, _ field: String) throws(CommandError) -> Bool {
        let (reader, key) = reader(value, field)
        return try reader.bool(key) ?? false
    }

    private static func integer<T: FixedWidthInteger>(
        _ value: DeviceValue, _ field: String, _ range: ClosedRange<T>, unit: String
    ) throws(CommandError) -> T {
        let (reader, key) = reader(value, field)
        let number = try reader.integer(key, in: Int64(range.lowerBound)...Int64(range.upperBound), unit: unit.isEmpty ? "" : " \(unit)")
        return T(number ?? Int64(range.lowerBound))
    }

    /// A number of `unit` with one decimal, as the band's tenths.
    private static func tenths(_ value: DeviceValue, _ field: String, _ range: ClosedRange<UInt16>, unit: String) throws(CommandError) -> UInt16 {
        let allowed = "a number from \(Double(range.lowerBound) / 10) to \(Double(range.upperBound) / 10) (\(unit)), to one decimal"
        guard let number = value.number, number.isFinite else { throw .invalidValue(field: field, "must be \(allowed); got \(RequestReader.quote(value))") }
        let tenths = (number * 10).rounded()
        guard tenths >= Double(range.lowerBound), tenths <= Double(range.upperBound) else {
            throw .invalidValue(field: field, "\(RequestReader.quote(value)) is out of range; must be \(allowed)")
        }
        return UInt16(tenths)
    }

    private static func named<Value: GoFITNamedValue>(_ value: DeviceValue, _ field: String, _: Value.Type) throws(CommandError) -> Value {
        guard let name = value.text, let named = Value(name: name) else {
            throw .invalidValue(field: field, "must be one of \(Value.quotedNames); got \(RequestReader.quote(value))")
        }
        return named
    }

    private static func time(_ value: DeviceValue, _ field: String) throws(CommandError) -> GoFITClockTime {
        guard let text = value.text, let time = GoFITClockTime(text) else {
            throw .invalidValue(field: field, "must be a time \"HH:mm\" from \"00:00\" to \"23:59\"; got \(RequestReader.quote(value))")
        }
        return time
    }

    private static func date(_ value: DeviceValue, _ field: String) throws(CommandError) -> GoFITDate {
        guard let text = value.text, let date = GoFITDate(text) else {
            throw .invalidValue(field: field, "must be a date \"yyyy-MM-dd\" on the calendar from 1900-01-01 to 2099-12-31; got \(RequestReader.quote(value))")
        }
        return date
    }

    private static func weekdays(_ value: DeviceValue, _ field: String) throws(CommandError) -> GoFITWeekdays {
        let names = GoFITWeekdays.dayNames.map { "\"\($0)\"" }.joined(separator: ", ")
        guard let list = value.list else { throw .invalidValue(field: field, "must be a list of days from \(names); got \(RequestReader.quote(value))") }
        var days: [String] = []
        for element in list {
            guard let name = element.text, GoFITWeekdays.dayNames.contains(name) else {
                throw .invalidValue(field: field, "\(RequestReader.quote(element)) is not a day; days are \(names)")
            }
            days.append(name)
        }
        return GoFITWeekdays(names: days) ?? []
    }

    private static func alarmText(_ value: DeviceValue, _ field: String) throws(CommandError) -> String {
        guard let text = value.text else { throw .invalidValue(field: field, "must be a string; got \(RequestReader.quote(value))") }
        let length = text.utf8.count
        guard length <= GoFITAlarm.maximumTextByteCount else {
            throw .invalidValue(field: field, "is \(length) bytes of UTF-8; an alarm's text is at most \(GoFITAlarm.maximumTextByteCount)")
        }
        return text
    }

}

/// The fields of one JSON object of a request, with the unknown ones already refused.
private struct ObjectFields {
    let path: String
    let fields: [String: DeviceValue]
    /// Why a field missing from the request and from the current value is needed.
    let whenMissing: String

    init(_ value: DeviceValue, path: String, names: [String], whenMissing: String) throws(CommandError) {
        let outer = RequestReader([path: value])
        guard let reader = try outer.nested(path) else { throw .invalidValue(field: path, "is required") }
        try reader.rejectUnknownFields(allowed: names, request: path)
        let fields = reader.arguments
        self.path = path
        self.fields = fields
        self.whenMissing = whenMissing
    }

    /// The request's value of `name` checked by `parse`, else `current`; neither is an error.
    func field<Value>(
        _ name: String, _ current: Value?, _ parse: (DeviceValue, String) throws(CommandError) -> Value
    ) throws(CommandError) -> Value {
        let field = "\(path).\(name)"
        if let value = fields[name] { return try parse(value, field) }
        guard let current else { throw .invalidValue(field: field, whenMissing) }
        return current
    }
}

extension GoFITSetting {
    fileprivate var currentUserProfile: GoFITUserProfile? { if case .userProfile(let value) = self { value } else { nil } }
    fileprivate var currentIdleAlert: GoFITIdleAlert? { if case .idleAlert(let value) = self { value } else { nil } }
    fileprivate var currentAlarms: [GoFITAlarm]? { if case .alarms(let value) = self { value } else { nil } }
    fileprivate var currentHeartRateTiming: GoFITHeartRateTiming? { if case .heartRateTiming(let value) = self { value } else { nil } }
    fileprivate var currentDoNotDisturb: GoFITDoNotDisturb? { if case .doNotDisturb(let value) = self { value } else { nil } }
    fileprivate var currentFindMyBand: GoFITFindMyBand? { if case .findMyBand(let value) = self { value } else { nil } }
    fileprivate var currentFindMyPhone: GoFITFindMyPhone? { if case .findMyPhone(let value) = self { value } else { nil } }
    fileprivate var currentHeartRateWarning: GoFITHeartRateWarning? { if case .heartRateWarning(let value) = self { value } else { nil } }
}
