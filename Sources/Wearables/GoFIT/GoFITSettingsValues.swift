// The typed values of the GoFIT band's settings (docs/protocols/gofit.md, "Settings"; seed 001's setting
// objects). They hold wire units, so a value that came off the band goes back unchanged.
//
// The memberwise initialisers check nothing: a value out of the doc's range can be built (that is how a test
// makes the band answer 18). The checks live in two places, sharing the ranges declared here:
// `GoFITSetting(tlv:)` (what the band does with a write) and `GoFITSettingsUpdate.parse` (the gateway's
// check of an MQTT request, with messages for a person).

/// A fixed set of wire values each with a name in the JSON of `request/settings`.
public protocol GoFITNamedValue: RawRepresentable<UInt8>, CaseIterable, Sendable, Equatable {
    /// The JSON spelling: `"metric"`, `"wake_up"`, `"zh_TW"`.
    var name: String { get }
}

extension GoFITNamedValue {
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }

    /// `"metric", "imperial"`, for messages.
    static var quotedNames: String { allCases.map { "\"\($0.name)\"" }.joined(separator: ", ") }
}

public enum GoFITGender: UInt8, GoFITNamedValue {
    case male = 0
    case female = 1

    public var name: String {
        switch self {
        case .male: "male"
        case .female: "female"
        }
    }
}

public enum GoFITUnitSystem: UInt8, GoFITNamedValue {
    case metric = 0
    case imperial = 1

    public var name: String {
        switch self {
        case .metric: "metric"
        case .imperial: "imperial"
        }
    }
}

/// The band's clock face; the wire value is the number of hours itself.
public enum GoFITTimeFormat: UInt8, GoFITNamedValue {
    case twelveHour = 12
    case twentyFourHour = 24

    /// `"12"` or `"24"`: the SDK's strings.
    public var name: String { String(rawValue) }
}

/// The wrist the band is worn on.
public enum GoFITHandedness: UInt8, GoFITNamedValue {
    case left = 0
    case right = 1

    public var name: String {
        switch self {
        case .left: "left"
        case .right: "right"
        }
    }
}

/// The band's display language (the SDK's TW, CN, EN, JP).
public enum GoFITLanguage: UInt8, GoFITNamedValue {
    case traditionalChinese = 0
    case simplifiedChinese = 1
    case english = 2
    case japanese = 3

    public var name: String {
        switch self {
        case .traditionalChinese: "zh_TW"
        case .simplifiedChinese: "zh_CN"
        case .english: "en"
        case .japanese: "ja"
        }
    }
}

/// What an alarm is for; the band shows a different icon for each (the SDK's 0–7).
public enum GoFITAlarmCategory: UInt8, GoFITNamedValue {
    case wakeUp = 0
    case sleep = 1
    case meeting = 2
    case training = 3
    case dating = 4
    case party = 5
    case others = 6
    case medicine = 7

    public var name: String {
        switch self {
        case .wakeUp: "wake_up"
        case .sleep: "sleep"
        case .meeting: "meeting"
        case .training: "training"
        case .dating: "dating"
        case .party: "party"
        case .others: "others"
        case .medicine: "medicine"
        }
    }
}

/// A calendar date as the band stores it: year u16, month u8, day u8.
///
/// The band's calendar runs from 1900-01-01 to 2099-12-31; `isValid` also knows month lengths and leap years,
/// so 2023-02-29 is not a date and 2024-02-29 is. Text form `"yyyy-MM-dd"`, exactly ten characters.
public struct GoFITDate: Sendable, Equatable, Hashable, LosslessStringConvertible {
    public var year: UInt16
    public var month: UInt8
    public var day: UInt8

    public static let years: ClosedRange<UInt16> = 1900...2099

    public init(year: UInt16, month: UInt8, day: UInt8) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses `"yyyy-MM-dd"`; nil for any other shape or a day the calendar does not have.
    public init?(_ description: String) {
        let characters = Array(description.utf8)
        guard characters.count == 10, characters[4] == UInt8(ascii: "-"), characters[7] == UInt8(ascii: "-"),
              let year = decimalValue(characters[0..<4]), let month = decimalValue(characters[5..<7]),
              let day = decimalValue(characters[8..<10])
        else { return nil }
        self.init(year: UInt16(year), month: UInt8(month), day: UInt8(day))
        guard isValid else { return nil }
    }

    public var description: String {
        "\(zeroPadded(Int(year), width: 4))-\(zeroPadded(Int(month), width: 2))-\(zeroPadded(Int(day), width: 2))"
    }

    public var isValid: Bool {
        Self.years.contains(year) && (1...12).contains(month) && day >= 1 && day <= Self.daysIn(month: month, year: year)
    }

    static func daysIn(month: UInt8, year: UInt16) -> UInt8 {
        switch month {
        case 2:
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return leap ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

/// A wall-clock time of day, `"00:00"` to `"23:59"`: hour u8, minute u8 on the wire.
public struct GoFITClockTime: Sendable, Equatable, Hashable, LosslessStringConvertible {
    public var hour: UInt8
    public var minute: UInt8

    public init(hour: UInt8, minute: UInt8) {
        self.hour = hour
        self.minute = minute
    }

    /// Parses `"HH:mm"` with two digits each (`"07:05"`, never `"7:5"`); nil for `"24:00"` and the like.
    public init?(_ description: String) {
        let characters = Array(description.utf8)
        guard characters.count == 5, characters[2] == UInt8(ascii: ":"),
              let hour = decimalValue(characters[0..<2]), let minute = decimalValue(characters[3..<5])
        else { return nil }
        self.init(hour: UInt8(hour), minute: UInt8(minute))
        guard isValid else { return nil }
    }

    public var description: String { "\(zeroPadded(Int(hour), width: 2)):\(zeroPadded(Int(minute), width: 2))" }

    public var isValid: Bool { hour < 24 && minute < 60 }
}

/// The days a setting repeats on, as the SDK's `repeatDays`: bit 0 Sunday … bit 6 Saturday. Bit 7 is not a day.
public struct GoFITWeekdays: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let sunday = GoFITWeekdays(rawValue: 1 << 0)
    public static let monday = GoFITWeekdays(rawValue: 1 << 1)
    public static let tuesday = GoFITWeekdays(rawValue: 1 << 2)
    public static let wednesday = GoFITWeekdays(rawValue: 1 << 3)
    public static let thursday = GoFITWeekdays(rawValue: 1 << 4)
    public static let friday = GoFITWeekdays(rawValue: 1 << 5)
    public static let saturday = GoFITWeekdays(rawValue: 1 << 6)

    public static let weekdays: GoFITWeekdays = [.monday, .tuesday, .wednesday, .thursday, .friday]
    public static let everyDay = GoFITWeekdays(rawValue: 0x7F)

    /// The JSON names in bit order.
    public static let dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    /// Sunday first: `["mon","wed"]` for Monday and Wednesday.
    public var names: [String] {
        Self.dayNames.indices.filter { rawValue & (1 << $0) != 0 }.map { Self.dayNames[$0] }
    }

    /// Nil when a name is not one of `dayNames`; a name given twice counts once.
    public init?(names: some Sequence<String>) {
        var rawValue: UInt8 = 0
        for name in names {
            guard let index = Self.dayNames.firstIndex(of: name) else { return nil }
            rawValue |= 1 << index
        }
        self.init(rawValue: rawValue)
    }
}

/// Seed 001's `DeviceSettingUserProfile`, in the band's units.
public struct GoFITUserProfile: Sendable, Equatable {
    public var heightMillimeters: UInt16
    /// Tenths of a kilogram.
    public var weightHectograms: UInt16
    public var age: UInt8
    public var strideCentimeters: UInt8
    public var birthday: GoFITDate
    public var gender: GoFITGender

    /// 50.0–250.0 cm.
    public static let heightMillimeterRange: ClosedRange<UInt16> = 500...2500
    /// 10.0–300.0 kg.
    public static let weightHectogramRange: ClosedRange<UInt16> = 100...3000
    public static let ageRange: ClosedRange<UInt8> = 0...99
    public static let strideCentimeterRange: ClosedRange<UInt8> = 30...150

    public init(heightMillimeters: UInt16, weightHectograms: UInt16, age: UInt8, strideCentimeters: UInt8,
                birthday: GoFITDate, gender: GoFITGender) {
        self.heightMillimeters = heightMillimeters
        self.weightHectograms = weightHectograms
        self.age = age
        self.strideCentimeters = strideCentimeters
        self.birthday = birthday
        self.gender = gender
    }
}

/// Seed 001's `DeviceSettingIdleAlert`: the band nudges the wearer after `intervalMinutes` without moving,
/// between `start` and `end` on `days`.
public struct GoFITIdleAlert: Sendable, Equatable {
    public var enabled: Bool
    public var days: GoFITWeekdays
    public var start: GoFITClockTime
    public var end: GoFITClockTime
    public var intervalMinutes: UInt16

    public static let intervalMinuteRange: ClosedRange<UInt16> = 15...240

    public init(enabled: Bool, days: GoFITWeekdays, start: GoFITClockTime, end: GoFITClockTime, intervalMinutes: UInt16) {
        self.enabled = enabled
        self.days = days
        self.start = start
        self.end = end
        self.intervalMinutes = intervalMinutes
    }
}

/// One of seed 001's `DeviceSettingAlarms`. An alarm repeats on `days`, or rings once on `date` when it has one.
public struct GoFITAlarm: Sendable, Equatable {
    /// 0–9, unique on the band.
    public var id: UInt8
    public var enabled: Bool
    public var category: GoFITAlarmCategory
    public var days: GoFITWeekdays
    /// Nil is `0/0/0` on the wire.
    public var date: GoFITDate?
    public var time: GoFITClockTime
    /// The SDK's `isActive`, carried as given.
    public var active: Bool
    /// At most 32 bytes of UTF-8.
    public var text: String

    public static let idRange: ClosedRange<UInt8> = 0...9
    public static let maximumCount = 10
    public static let maximumTextByteCount = 32

    public init(id: UInt8, enabled: Bool, category: GoFITAlarmCategory, days: GoFITWeekdays, date: GoFITDate?,
                time: GoFITClockTime, active: Bool, text: String) {
        self.id = id
        self.enabled = enabled
        self.category = category
        self.days = days
        self.date = date
        self.time = time
        self.active = active
        self.text = text
    }
}

/// Seed 001's `DeviceSettingTimingDetectHR`: measure the pulse every `intervalMinutes` between `start` and `end`.
/// The SDK's `repeatDays`, marked "useless" there, is not carried.
public struct GoFITHeartRateTiming: Sendable, Equatable {
    public var enabled: Bool
    public var start: GoFITClockTime
    public var end: GoFITClockTime
    public var intervalMinutes: UInt16

    public static let intervalMinuteRange: ClosedRange<UInt16> = 1...240

    public init(enabled: Bool, start: GoFITClockTime, end: GoFITClockTime, intervalMinutes: UInt16) {
        self.enabled = enabled
        self.start = start
        self.end = end
        self.intervalMinutes = intervalMinutes
    }
}

/// Seed 001's `DeviceSettingDND`; `start` after `end` spans midnight. No `repeatDays` (see above).
public struct GoFITDoNotDisturb: Sendable, Equatable {
    public var enabled: Bool
    public var start: GoFITClockTime
    public var end: GoFITClockTime

    public init(enabled: Bool, start: GoFITClockTime, end: GoFITClockTime) {
        self.enabled = enabled
        self.start = start
        self.end = end
    }
}

/// Seed 001's `DeviceSettingFindMyCare`: how the band behaves when the phone looks for it.
public struct GoFITFindMyBand: Sendable, Equatable {
    public var vibration: Bool
    public var seconds: UInt8
    /// JSON `repeat`.
    public var repeats: Bool

    public static let secondsRange: ClosedRange<UInt8> = 1...60

    public init(vibration: Bool, seconds: UInt8, repeats: Bool) {
        self.vibration = vibration
        self.seconds = seconds
        self.repeats = repeats
    }
}

/// Seed 001's `DeviceSettingFindMyPhone`: whether the band offers "find my phone", and how it confirms.
public struct GoFITFindMyPhone: Sendable, Equatable {
    public var enabled: Bool
    public var vibrationSeconds: UInt8
    public var sound: Bool

    public static let vibrationSecondsRange: ClosedRange<UInt8> = 0...60

    public init(enabled: Bool, vibrationSeconds: UInt8, sound: Bool) {
        self.enabled = enabled
        self.vibrationSeconds = vibrationSeconds
        self.sound = sound
    }
}

/// Seed 001's `DeviceSettingHRWarning`: warn when the pulse leaves `minBPM`…`maxBPM`; `minBPM` < `maxBPM`.
public struct GoFITHeartRateWarning: Sendable, Equatable {
    public var enabled: Bool
    public var maxBPM: UInt8
    public var minBPM: UInt8

    public static let maxBPMRange: ClosedRange<UInt8> = 60...220
    public static let minBPMRange: ClosedRange<UInt8> = 30...150

    public init(enabled: Bool, maxBPM: UInt8, minBPM: UInt8) {
        self.enabled = enabled
        self.maxBPM = maxBPM
        self.minBPM = minBPM
    }
}

/// The value of ASCII decimal digits, nil if any byte is not one (so no sign, space or non-ASCII digit).
private func decimalValue(_ digits: ArraySlice<UInt8>) -> Int? {
    var value = 0
    for byte in digits {
        guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
        value = value * 10 + Int(byte - UInt8(ascii: "0"))
    }
    return value
}

private func zeroPadded(_ value: Int, width: Int) -> String {
    let digits = String(value)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
