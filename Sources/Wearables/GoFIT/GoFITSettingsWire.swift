/// The binary layouts of docs/protocols/gofit.md's settings table, little-endian.
///
/// Decoding is strict, as the band is: a value of the wrong length, or any field outside the table's range,
/// throws, naming the field as `<json key>.<field>` (`idle_alert.start.hour`, `user_profile.height_cm`) with the
/// raw wire value (millimetres for `height_cm`, tenths of a kilogram for `weight_kg`).
extension GoFITSetting {
    /// The setting as the band stores it. Values are written as they are, in range or not; only the wire's own
    /// limits (a text's length byte) bound them.
    public func tlv() -> GoFITSettingTLV {
        var writer = ByteWriter()
        switch self {
        case .userProfile(let profile):
            writer.write(profile.heightMillimeters)
            writer.write(profile.weightHectograms)
            writer.write(profile.age)
            writer.write(profile.strideCentimeters)
            profile.birthday.write(to: &writer)
            writer.write(profile.gender.rawValue)
        case .stepGoal(let steps):
            writer.write(steps)
        case .unitSystem(let system):
            writer.write(system.rawValue)
        case .timeFormat(let format):
            writer.write(format.rawValue)
        case .handedness(let handedness):
            writer.write(handedness.rawValue)
        case .autoLightUp(let on), .disconnectAlert(let on), .screenLock(let on):
            writer.write(on.wireByte)
        case .idleAlert(let alert):
            writer.write(alert.enabled.wireByte)
            writer.write(alert.days.rawValue)
            alert.start.write(to: &writer)
            alert.end.write(to: &writer)
            writer.write(alert.intervalMinutes)
        case .alarms(let alarms):
            writer.write(UInt8(truncatingIfNeeded: alarms.count))
            for alarm in alarms {
                writer.write(alarm.id)
                writer.write(alarm.enabled.wireByte)
                writer.write(alarm.category.rawValue)
                writer.write(alarm.days.rawValue)
                if let date = alarm.date {
                    date.write(to: &writer)
                } else {
                    writer.write(contentsOf: [0, 0, 0, 0])
                }
                alarm.time.write(to: &writer)
                writer.write(alarm.active.wireByte)
                let text = Array(alarm.text.utf8.prefix(255))
                writer.write(UInt8(text.count))
                writer.write(contentsOf: text)
            }
        case .heartRateTiming(let timing):
            writer.write(timing.enabled.wireByte)
            timing.start.write(to: &writer)
            timing.end.write(to: &writer)
            writer.write(timing.intervalMinutes)
        case .doNotDisturb(let dnd):
            writer.write(dnd.enabled.wireByte)
            dnd.start.write(to: &writer)
            dnd.end.write(to: &writer)
        case .language(let language):
            writer.write(language.rawValue)
        case .findMyBand(let find):
            writer.write(find.vibration.wireByte)
            writer.write(find.seconds)
            writer.write(find.repeats.wireByte)
        case .findMyPhone(let find):
            writer.write(find.enabled.wireByte)
            writer.write(find.vibrationSeconds)
            writer.write(find.sound.wireByte)
        case .heartRateWarning(let warning):
            writer.write(warning.enabled.wireByte)
            writer.write(warning.maxBPM)
            writer.write(warning.minBPM)
        }
        return GoFITSettingTLV(id: id.rawValue, value: writer.bytes)
    }

    /// What the band does with each TLV of a `SETTINGS_WRITE` (any error is status 18, an unknown id 21) and
    /// the driver with each of a `SETTINGS_READ` answer.
    ///
    /// - Throws: `unknownIdentifier(field: "setting")` for an id outside 1–16; `truncated` for a value too short,
    ///   `outOfRange(field: "<key>.length")` for one too long; `outOfRange` naming the first field outside the
    ///   table's range; `invalidUTF8` for an alarm text that is not UTF-8.
    public init(tlv: GoFITSettingTLV) throws(GATTCodecError) {
        guard let id = GoFITSettingID(rawValue: tlv.id) else {
            throw .unknownIdentifier(field: "setting", value: Int(tlv.id))
        }
        if let length = id.valueLength {
            guard tlv.value.count >= length else { throw .truncated(expected: length, actual: tlv.value.count) }
            guard tlv.value.count == length else { throw .outOfRange(field: "\(id.key).length", value: tlv.value.count) }
        }
        var reader = GoFITSettingReader(ByteReader(tlv.value), key: id.key)
        self = try reader.read(id)
        guard reader.bytes.isAtEnd else { throw .outOfRange(field: "\(id.key).length", value: tlv.value.count) }
    }

    /// Throws what the band would answer to this value: the range check of `init(tlv:)` without the bytes.
    public func validate() throws(GATTCodecError) {
        _ = try GoFITSetting(tlv: tlv())
    }
}

/// Reads one setting's fields and checks each against the table as it goes.
private struct GoFITSettingReader {
    var bytes: ByteReader
    let key: String

    init(_ bytes: ByteReader, key: String) {
        self.bytes = bytes
        self.key = key
    }

    mutating func read(_ id: GoFITSettingID) throws(GATTCodecError) -> GoFITSetting {
        switch id {
        case .userProfile:
            let height = try integer(UInt16.self, "height_cm", GoFITUserProfile.heightMillimeterRange)
            let weight = try integer(UInt16.self, "weight_kg", GoFITUserProfile.weightHectogramRange)
            let age = try integer(UInt8.self, "age", GoFITUserProfile.ageRange)
            let stride = try integer(UInt8.self, "stride_cm", GoFITUserProfile.strideCentimeterRange)
            guard let birthday = try date("birthday") else { throw .outOfRange(field: "\(key).birthday.year", value: 0) }
            let gender = try named(GoFITGender.self, "gender")
            return .userProfile(GoFITUserProfile(heightMillimeters: height, weightHectograms: weight, age: age,
                                                 strideCentimeters: stride, birthday: birthday, gender: gender))
        case .stepGoal:
            return .stepGoal(try integer(UInt32.self, "value", GoFITSetting.stepGoalRange))
        case .unitSystem:
            return .unitSystem(try named(GoFITUnitSystem.self, "value"))
        case .timeFormat:
            return .timeFormat(try named(GoFITTimeFormat.self, "value"))
        case .handedness:
            return .handedness(try named(GoFITHandedness.self, "value"))
        case .autoLightUp:
            return .autoLightUp(try flag("value"))
        case .disconnectAlert:
            return .disconnectAlert(try flag("value"))
        case .idleAlert:
            let enabled = try flag("enabled")
            let days = try weekdays("days")
            let start = try time("start")
            let end = try time("end")
            let interval = try integer(UInt16.self, "interval_min", GoFITIdleAlert.intervalMinuteRange)
            return .idleAlert(GoFITIdleAlert(enabled: enabled, days: days, start: start, end: end, intervalMinutes: interval))
        case .alarms:
            return .alarms(try alarms())
        case .heartRateTiming:
            let enabled = try flag("enabled")
            let start = try time("start")
            let end = try time("end")
            let interval = try integer(UInt16.self, "interval_min", GoFITHeartRateTiming.intervalMinuteRange)
            return .heartRateTiming(GoFITHeartRateTiming(enabled: enabled, start: start, end: end, intervalMinutes: interval))
        case .doNotDisturb:
            let enabled = try flag("enabled")
            let start = try time("start")
            let end = try time("end")
            return .doNotDisturb(GoFITDoNotDisturb(enabled: enabled, start: start, end: end))
        case .language:
            return .language(try named(GoFITLanguage.self, "value"))
        case .findMyBand:
            let vibration = try flag("vibration")
            let seconds = try integer(UInt8.self, "seconds", GoFITFindMyBand.secondsRange)
            let repeats = try flag("repeat")
            return .findMyBand(GoFITFindMyBand(vibration: vibration, seconds: seconds, repeats: repeats))
        case .findMyPhone:
            let enabled = try flag("enabled")
            let seconds = try integer(UInt8.self, "vibration_s", GoFITFindMyPhone.vibrationSecondsRange)
            let sound = try flag("sound")
            return .findMyPhone(GoFITFindMyPhone(enabled: enabled, vibrationSeconds: seconds, sound: sound))
        case .heartRateWarning:
            let enabled = try flag("enabled")
            let max = try integer(UInt8.self, "max_bpm", GoFITHeartRateWarning.maxBPMRange)
            let min = try integer(UInt8.self, "min_bpm", GoFITHeartRateWarning.minBPMRange)
            guard min < max else { throw .outOfRange(field: "\(key).min_bpm", value: Int(min)) }
            return .heartRateWarning(GoFITHeartRateWarning(enabled: enabled, maxBPM: max, minBPM: min))
        case .screenLock:
            return .screenLock(try flag("value"))
        }
    }

    private mutating func alarms() throws(GATTCodecError) -> [GoFITAlarm] {
        let count = try bytes.readUInt8()
        guard count <= GoFITAlarm.maximumCount else { throw .outOfRange(field: "\(key).count", value: Int(count)) }
        var alarms: [GoFITAlarm] = []
        for _ in 0..<count {
            let id = try integer(UInt8.self, "id", GoFITAlarm.idRange)
            guard !alarms.contains(where: { $0.id == id }) else { throw .outOfRange(field: "\(key).id", value: Int(id)) }
            let enabled = try flag("enabled")
            let category = try named(GoFITAlarmCategory.self, "category")
            let days = try weekdays("days")
            let date = try date("date")
            let time = try time("time")
            let active = try flag("active")
            let length = try bytes.readUInt8()
            guard length <= GoFITAlarm.maximumTextByteCount else { throw .outOfRange(field: "\(key).text", value: Int(length)) }
            guard let text = String(validating: try bytes.readBytes(Int(length)), as: UTF8.self) else { throw .invalidUTF8 }
            alarms.append(GoFITAlarm(id: id, enabled: enabled, category: category, days: days, date: date, time: time,
                                     active: active, text: text))
        }
        return alarms
    }

    private mutating func integer<T: FixedWidthInteger & UnsignedInteger>(
        _: T.Type, _ field: String, _ range: ClosedRange<T>
    ) throws(GATTCodecError) -> T {
        let value = try bytes.read(T.self)
        guard range.contains(value) else { throw .outOfRange(field: "\(key).\(field)", value: Int(value)) }
        return value
    }

    private mutating func flag(_ field: String) throws(GATTCodecError) -> Bool {
        switch try bytes.readUInt8() {
        case 0: return false
        case 1: return true
        case let other: throw .outOfRange(field: "\(key).\(field)", value: Int(other))
        }
    }

    private mutating func named<Value: GoFITNamedValue>(_: Value.Type, _ field: String) throws(GATTCodecError) -> Value {
        let raw = try bytes.readUInt8()
        guard let value = Value(rawValue: raw) else { throw .outOfRange(field: "\(key).\(field)", value: Int(raw)) }
        return value
    }

    private mutating func weekdays(_ field: String) throws(GATTCodecError) -> GoFITWeekdays {
        let raw = try bytes.readUInt8()
        guard raw & ~GoFITWeekdays.everyDay.rawValue == 0 else { throw .outOfRange(field: "\(key).\(field)", value: Int(raw)) }
        return GoFITWeekdays(rawValue: raw)
    }

    private mutating func time(_ field: String) throws(GATTCodecError) -> GoFITClockTime {
        let hour = try bytes.readUInt8()
        let minute = try bytes.readUInt8()
        guard hour < 24 else { throw .outOfRange(field: "\(key).\(field).hour", value: Int(hour)) }
        guard minute < 60 else { throw .outOfRange(field: "\(key).\(field).minute", value: Int(minute)) }
        return GoFITClockTime(hour: hour, minute: minute)
    }

    /// Nil for `0/0/0`, which only an alarm's date may be.
    private mutating func date(_ field: String) throws(GATTCodecError) -> GoFITDate? {
        let date = GoFITDate(year: try bytes.read(UInt16.self), month: try bytes.readUInt8(), day: try bytes.readUInt8())
        if date == GoFITDate(year: 0, month: 0, day: 0) { return nil }
        guard GoFITDate.years.contains(date.year) else { throw .outOfRange(field: "\(key).\(field).year", value: Int(date.year)) }
        guard (1...12).contains(date.month) else { throw .outOfRange(field: "\(key).\(field).month", value: Int(date.month)) }
        guard date.isValid else { throw .outOfRange(field: "\(key).\(field).day", value: Int(date.day)) }
        return date
    }
}

extension GoFITDate {
    fileprivate func write(to writer: inout ByteWriter) {
        writer.write(year)
        writer.write(month)
        writer.write(day)
    }
}

extension GoFITClockTime {
    fileprivate func write(to writer: inout ByteWriter) {
        writer.write(hour)
        writer.write(minute)
    }
}

extension Bool {
    fileprivate var wireByte: UInt8 { self ? 1 : 0 }
}
