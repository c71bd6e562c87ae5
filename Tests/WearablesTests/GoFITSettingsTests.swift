import Testing

@testable import Wearables

/// One value of each setting with its bytes written by hand from docs/protocols/gofit.md's table, and its JSON.
struct GoFITSettingExample: Sendable, CustomTestStringConvertible {
    let setting: GoFITSetting
    /// The whole TLV: id, length, value.
    let bytes: [UInt8]
    let json: DeviceValue

    var testDescription: String { setting.id.key }

    static let all: [GoFITSettingExample] = [
        // 175.5 cm = 1755 mm = 0x06DB, 68.2 kg = 682 = 0x02AA, 34, 72 cm, 1990 = 0x07C6-07-15, female.
        .init(setting: .userProfile(GoFITUserProfile(heightMillimeters: 1755, weightHectograms: 682, age: 34, strideCentimeters: 72,
                                                     birthday: GoFITDate(year: 1990, month: 7, day: 15), gender: .female)),
              bytes: [0x01, 0x0B, 0xDB, 0x06, 0xAA, 0x02, 0x22, 0x48, 0xC6, 0x07, 0x07, 0x0F, 0x01],
              json: ["height_cm": 175.5, "weight_kg": 68.2, "age": 34, "stride_cm": 72, "birthday": "1990-07-15", "gender": "female"]),
        .init(setting: .stepGoal(8000), bytes: [0x02, 0x04, 0x40, 0x1F, 0x00, 0x00], json: 8000),
        .init(setting: .unitSystem(.imperial), bytes: [0x03, 0x01, 0x01], json: "imperial"),
        .init(setting: .timeFormat(.twentyFourHour), bytes: [0x04, 0x01, 0x18], json: "24"),
        .init(setting: .handedness(.right), bytes: [0x05, 0x01, 0x01], json: "right"),
        .init(setting: .autoLightUp(true), bytes: [0x06, 0x01, 0x01], json: true),
        .init(setting: .disconnectAlert(false), bytes: [0x07, 0x01, 0x00], json: false),
        // Monday, Wednesday, Friday = bits 1, 3, 5 = 0x2A; 09:30 to 17:45; 90 minutes.
        .init(setting: .idleAlert(GoFITIdleAlert(enabled: true, days: [.monday, .wednesday, .friday],
                                                 start: GoFITClockTime(hour: 9, minute: 30), end: GoFITClockTime(hour: 17, minute: 45),
                                                 intervalMinutes: 90)),
              bytes: [0x08, 0x08, 0x01, 0x2A, 0x09, 0x1E, 0x11, 0x2D, 0x5A, 0x00],
              json: ["enabled": true, "days": ["mon", "wed", "fri"], "start": "09:30", "end": "17:45", "interval_min": 90]),
        .init(setting: .alarms([
            GoFITAlarm(id: 0, enabled: true, category: .wakeUp, days: .weekdays, date: nil,
                       time: GoFITClockTime(hour: 7, minute: 30), active: true, text: ""),
            GoFITAlarm(id: 3, enabled: false, category: .medicine, days: [], date: GoFITDate(year: 2024, month: 2, day: 29),
                       time: GoFITClockTime(hour: 20, minute: 5), active: false, text: "Pills"),
        ]),
              bytes: [0x09, 0x1E, 0x02,
                      0x00, 0x01, 0x00, 0x3E, 0x00, 0x00, 0x00, 0x00, 0x07, 0x1E, 0x01, 0x00,
                      0x03, 0x00, 0x07, 0x00, 0xE8, 0x07, 0x02, 0x1D, 0x14, 0x05, 0x00, 0x05, 0x50, 0x69, 0x6C, 0x6C, 0x73],
              json: [["id": 0, "enabled": true, "category": "wake_up", "days": ["mon", "tue", "wed", "thu", "fri"], "date": nil,
                      "time": "07:30", "active": true, "text": ""],
                     ["id": 3, "enabled": false, "category": "medicine", "days": [], "date": "2024-02-29",
                      "time": "20:05", "active": false, "text": "Pills"]]),
        .init(setting: .heartRateTiming(GoFITHeartRateTiming(enabled: true, start: GoFITClockTime(hour: 8, minute: 0),
                                                             end: GoFITClockTime(hour: 20, minute: 0), intervalMinutes: 30)),
              bytes: [0x0A, 0x07, 0x01, 0x08, 0x00, 0x14, 0x00, 0x1E, 0x00],
              json: ["enabled": true, "start": "08:00", "end": "20:00", "interval_min": 30]),
        .init(setting: .doNotDisturb(GoFITDoNotDisturb(enabled: true, start: GoFITClockTime(hour: 22, minute: 30),
                                                       end: GoFITClockTime(hour: 6, minute: 15))),
              bytes: [0x0B, 0x05, 0x01, 0x16, 0x1E, 0x06, 0x0F],
              json: ["enabled": true, "start": "22:30", "end": "06:15"]),
        .init(setting: .language(.japanese), bytes: [0x0C, 0x01, 0x03], json: "ja"),
        .init(setting: .findMyBand(GoFITFindMyBand(vibration: true, seconds: 15, repeats: true)),
              bytes: [0x0D, 0x03, 0x01, 0x0F, 0x01],
              json: ["vibration": true, "seconds": 15, "repeat": true]),
        .init(setting: .findMyPhone(GoFITFindMyPhone(enabled: false, vibrationSeconds: 0, sound: true)),
              bytes: [0x0E, 0x03, 0x00, 0x00, 0x01],
              json: ["enabled": false, "vibration_s": 0, "sound": true]),
        .init(setting: .heartRateWarning(GoFITHeartRateWarning(enabled: true, maxBPM: 170, minBPM: 45)),
              bytes: [0x0F, 0x03, 0x01, 0xAA, 0x2D],
              json: ["enabled": true, "max_bpm": 170, "min_bpm": 45]),
        .init(setting: .screenLock(true), bytes: [0x10, 0x01, 0x01], json: true),
    ]
}

/// The wire codec: what the driver reads from `SETTINGS_READ` and what the band accepts in `SETTINGS_WRITE`.
@Suite struct GoFITSettingsCodecTests {
    func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> GoFITSetting {
        let tlvs = try GoFITSettingTLV.decodeList(bytes)
        guard tlvs.count == 1 else { throw .outOfRange(field: "test: TLV count", value: tlvs.count) }
        return try GoFITSetting(tlv: tlvs[0])
    }

    func expectRefused(_ bytes: [UInt8], _ expected: GATTCodecError, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(throws: expected, sourceLocation: sourceLocation) { try decode(bytes) }
    }

    @Test func everySettingHasAnExample() {
        #expect(GoFITSettingExample.all.map(\.setting.id) == GoFITSettingID.allCases)
        #expect(GoFITSettingID.allCases.count == 16)
    }

    @Test(arguments: GoFITSettingExample.all)
    func encodesToTheDocumentedBytes(_ example: GoFITSettingExample) {
        #expect(GoFITSettingTLV.encode([example.setting.tlv()]) == example.bytes)
    }

    @Test(arguments: GoFITSettingExample.all)
    func decodesTheDocumentedBytes(_ example: GoFITSettingExample) throws {
        #expect(try decode(example.bytes) == example.setting)
    }

    @Test(arguments: GoFITSettingExample.all)
    func theStateShowsTheDocumentedJSON(_ example: GoFITSettingExample) {
        #expect(example.setting.deviceValue == example.json)
    }

    @Test(arguments: GoFITSettingExample.all)
    func everyValueCutShortIsTruncated(_ example: GoFITSettingExample) {
        let value = Array(example.bytes.dropFirst(2))
        for length in 0..<value.count {
            do {
                let setting = try GoFITSetting(tlv: GoFITSettingTLV(id: example.bytes[0], value: Array(value.prefix(length))))
                Issue.record("a \(length)-byte value decoded to \(setting)")
            } catch {
                guard case .truncated(let expected, let actual) = error, actual == length, expected > length else {
                    Issue.record("a \(length)-byte value threw \(error)")
                    continue
                }
            }
        }
    }

    @Test func theDocsSettingsWriteExampleCarriesStepGoalAndTimeFormat() {
        #expect(GoFITSettingTLV.encode([GoFITSetting.stepGoal(8000).tlv(), GoFITSetting.timeFormat(.twentyFourHour).tlv()])
            == [0x02, 0x04, 0x40, 0x1F, 0x00, 0x00, 0x04, 0x01, 0x18])
    }

    @Test func aValueTooLongIsRefusedNamingItsLength() {
        expectRefused([0x02, 0x05, 0x40, 0x1F, 0x00, 0x00, 0x00], .outOfRange(field: "step_goal.length", value: 5))
        expectRefused([0x06, 0x02, 0x01, 0x00], .outOfRange(field: "auto_light_up.length", value: 2))
        // An alarm list with a byte after its last alarm.
        expectRefused([0x09, 0x02, 0x00, 0x00], .outOfRange(field: "alarms.length", value: 2))
    }

    @Test func unknownSettingIDsAreRefused() {
        expectRefused([0x11, 0x01, 0x00], .unknownIdentifier(field: "setting", value: 17))
        expectRefused([0x00, 0x01, 0x00], .unknownIdentifier(field: "setting", value: 0))
    }

    @Test func datesMustBeOnTheCalendar() {
        let profile: [UInt8] = [0x01, 0x0B, 0xDB, 0x06, 0xAA, 0x02, 0x22, 0x48]
        expectRefused(profile + [0xC6, 0x07, 0x0D, 0x0F, 0x01], .outOfRange(field: "user_profile.birthday.month", value: 13))
        // 2023 = 0x07E7 had no 29 February; 2024 did (the alarm example).
        expectRefused(profile + [0xE7, 0x07, 0x02, 0x1D, 0x01], .outOfRange(field: "user_profile.birthday.day", value: 29))
        expectRefused(profile + [0xC6, 0x07, 0x04, 0x1F, 0x01], .outOfRange(field: "user_profile.birthday.day", value: 31))
        expectRefused(profile + [0x00, 0x00, 0x00, 0x00, 0x01], .outOfRange(field: "user_profile.birthday.year", value: 0))
        expectRefused(profile + [0xC6, 0x07, 0x07, 0x0F, 0x02], .outOfRange(field: "user_profile.gender", value: 2))
    }

    @Test func timesMustBeOnTheClock() {
        expectRefused([0x08, 0x08, 0x01, 0x2A, 0x18, 0x00, 0x11, 0x2D, 0x5A, 0x00], .outOfRange(field: "idle_alert.start.hour", value: 24))
        expectRefused([0x08, 0x08, 0x01, 0x2A, 0x09, 0x1E, 0x11, 0x3C, 0x5A, 0x00], .outOfRange(field: "idle_alert.end.minute", value: 60))
        expectRefused([0x0B, 0x05, 0x01, 0x16, 0x1E, 0x06, 0x3C], .outOfRange(field: "do_not_disturb.end.minute", value: 60))
    }

    @Test func valuesOutsideTheTablesRangesAreRefused() {
        expectRefused([0x02, 0x04, 0x63, 0x00, 0x00, 0x00], .outOfRange(field: "step_goal.value", value: 99))
        expectRefused([0x02, 0x04, 0xA1, 0x86, 0x01, 0x00], .outOfRange(field: "step_goal.value", value: 100_001))
        expectRefused([0x04, 0x01, 0x0C + 1], .outOfRange(field: "time_format.value", value: 13))
        expectRefused([0x06, 0x01, 0x02], .outOfRange(field: "auto_light_up.value", value: 2))
        expectRefused([0x0C, 0x01, 0x04], .outOfRange(field: "language.value", value: 4))
        expectRefused([0x08, 0x08, 0x01, 0x80, 0x09, 0x1E, 0x11, 0x2D, 0x5A, 0x00], .outOfRange(field: "idle_alert.days", value: 0x80))
        expectRefused([0x08, 0x08, 0x01, 0x2A, 0x09, 0x1E, 0x11, 0x2D, 0x0E, 0x00], .outOfRange(field: "idle_alert.interval_min", value: 14))
        expectRefused([0x0A, 0x07, 0x01, 0x08, 0x00, 0x14, 0x00, 0x00, 0x00], .outOfRange(field: "heart_rate_timing.interval_min", value: 0))
        expectRefused([0x0D, 0x03, 0x01, 0x3D, 0x01], .outOfRange(field: "find_my_band.seconds", value: 61))
        expectRefused([0x0E, 0x03, 0x00, 0x3D, 0x01], .outOfRange(field: "find_my_phone.vibration_s", value: 61))
        expectRefused([0x01, 0x0B, 0xF3, 0x01, 0xAA, 0x02, 0x22, 0x48, 0xC6, 0x07, 0x07, 0x0F, 0x01],
                      .outOfRange(field: "user_profile.height_cm", value: 499))
        expectRefused([0x0F, 0x03, 0x01, 0xDD, 0x2D], .outOfRange(field: "heart_rate_warning.max_bpm", value: 221))
        // min must stay below max.
        expectRefused([0x0F, 0x03, 0x01, 0x64, 0x64], .outOfRange(field: "heart_rate_warning.min_bpm", value: 100))
    }

    @Test func alarmListsAreCheckedAlarmByAlarm() throws {
        let alarm: [UInt8] = [0x00, 0x01, 0x00, 0x3E, 0x00, 0x00, 0x00, 0x00, 0x07, 0x1E, 0x01, 0x00]
        func list(_ count: UInt8, _ alarms: [UInt8]) -> [UInt8] { [0x09, UInt8(alarms.count + 1), count] + alarms }
        #expect(try decode(list(0, [])) == .alarms([]))
        expectRefused(list(11, []), .outOfRange(field: "alarms.count", value: 11))
        expectRefused(list(1, [0x0A] + alarm.dropFirst()), .outOfRange(field: "alarms.id", value: 10))
        expectRefused(list(2, alarm + alarm), .outOfRange(field: "alarms.id", value: 0))
        var category = alarm
        category[2] = 8
        expectRefused(list(1, category), .outOfRange(field: "alarms.category", value: 8))
        var halfDate = alarm
        halfDate[6] = 5 // month 5 of year 0
        expectRefused(list(1, halfDate), .outOfRange(field: "alarms.date.year", value: 0))
        let longText = Array(alarm.dropLast()) + [33] + Array(repeating: 0x41, count: 33)
        expectRefused(list(1, longText), .outOfRange(field: "alarms.text", value: 33))
        expectRefused(list(1, Array(alarm.dropLast()) + [2, 0xC3, 0x28]), .invalidUTF8)
    }

    @Test func factoryDefaultsAreOneValidValuePerSetting() throws {
        #expect(GoFITSetting.factoryDefaults.map(\.id) == GoFITSettingID.allCases)
        for setting in GoFITSetting.factoryDefaults {
            #expect(throws: Never.self) { try setting.validate() }
            #expect(try GoFITSetting(tlv: setting.tlv()) == setting)
        }
        let state = GoFITSettingsUpdate.settingsObject(GoFITSetting.factoryDefaults)
        #expect(state.count == 16)
        #expect(state["alarms"] == [["id": 0, "enabled": false, "category": "wake_up", "days": ["mon", "tue", "wed", "thu", "fri"],
                                     "date": nil, "time": "07:00", "active": false, "text": ""]])
        #expect(state["time_format"] == "24")
    }

    @Test func validateAnswersWhatTheBandWould() {
        #expect(throws: GATTCodecError.outOfRange(field: "step_goal.value", value: 50)) { try GoFITSetting.stepGoal(50).validate() }
        let alarm = GoFITAlarm(id: 0, enabled: true, category: .party, days: [], date: nil,
                               time: GoFITClockTime(hour: 12, minute: 0), active: true, text: String(repeating: "x", count: 40))
        #expect(throws: GATTCodecError.outOfRange(field: "alarms.text", value: 40)) { try GoFITSetting.alarms([alarm]).validate() }
    }
}

/// Dates, times and days in their text forms.
@Suite struct GoFITSettingValueTests {
    @Test func datesParseOnlyRealDaysInTheBandsCalendar() {
        #expect(GoFITDate("2024-02-29") == GoFITDate(year: 2024, month: 2, day: 29))
        #expect(GoFITDate("2000-02-29") != nil) // divisible by 400
        #expect(GoFITDate("1900-02-29") == nil) // divisible by 100
        #expect(GoFITDate("2023-02-29") == nil)
        #expect(GoFITDate("2023-04-31") == nil)
        #expect(GoFITDate("2023-13-01") == nil)
        #expect(GoFITDate("2023-00-10") == nil)
        #expect(GoFITDate("1899-12-31") == nil)
        #expect(GoFITDate("2023-2-01") == nil)
        #expect(GoFITDate("2023/02/01") == nil)
        #expect(GoFITDate("+023-02-01") == nil)
        #expect(GoFITDate(year: 1995, month: 1, day: 1).description == "1995-01-01")
    }

    @Test func timesAreTwoDigitsEach() {
        #expect(GoFITClockTime("07:05") == GoFITClockTime(hour: 7, minute: 5))
        #expect(GoFITClockTime("23:59") == GoFITClockTime(hour: 23, minute: 59))
        #expect(GoFITClockTime("7:5") == nil)
        #expect(GoFITClockTime("7:05") == nil)
        #expect(GoFITClockTime("24:00") == nil)
        #expect(GoFITClockTime("12:60") == nil)
        #expect(GoFITClockTime("12-30") == nil)
        #expect(GoFITClockTime(hour: 6, minute: 0).description == "06:00")
    }

    @Test func daysAreBitsFromSunday() {
        #expect(GoFITWeekdays(names: ["sun", "sat"])?.rawValue == 0b0100_0001)
        #expect(GoFITWeekdays.weekdays.rawValue == 0x3E)
        #expect(GoFITWeekdays(rawValue: 0x7F).names == ["sun", "mon", "tue", "wed", "thu", "fri", "sat"])
        #expect(GoFITWeekdays(names: ["mon", "funday"]) == nil)
    }

    @Test func settingKeysRoundTrip() {
        for id in GoFITSettingID.allCases { #expect(GoFITSettingID(key: id.key) == id) }
        #expect(GoFITSettingID(key: "alarm") == nil)
        #expect(GoFITSettingID.heartRateWarning.key == "heart_rate_warning")
        #expect(GoFITSettingID.screenLock.rawValue == 16)
    }
}

/// `request/settings` for GoFIT bands: a partial update, checked completely before anything is written.
@Suite struct GoFITSettingsUpdateTests {
    let current: [GoFITSettingID: GoFITSetting] = Dictionary(
        uniqueKeysWithValues: GoFITSettingExample.all.map { ($0.setting.id, $0.setting) })

    func expectInvalid(_ request: [String: DeviceValue], current: [GoFITSettingID: GoFITSetting]? = nil, field: String,
                       mentioning words: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let result = try GoFITSettingsUpdate.parse(request, current: current ?? self.current)
            Issue.record("accepted \(request) as \(result)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == .invalidValue, sourceLocation: sourceLocation)
            #expect(error.names(field), "\(error.message)", sourceLocation: sourceLocation)
            for word in words {
                #expect(error.message.contains(word), "\(error.message)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test(arguments: GoFITSettingExample.all)
    func theStatesJSONIsAValidRequestFromNothing(_ example: GoFITSettingExample) throws {
        let result = try GoFITSettingsUpdate.parse([example.setting.id.key: example.json], current: [:])
        #expect(result == [example.setting])
    }

    @Test func onlyTheGivenKeysAreReturnedInIDOrder() throws {
        let result = try GoFITSettingsUpdate.parse(["screen_lock": false, "step_goal": 12000, "language": "zh_TW"], current: [:])
        #expect(result == [.stepGoal(12000), .language(.traditionalChinese), .screenLock(false)])
        #expect(try GoFITSettingsUpdate.parse([:], current: current) == [])
    }

    @Test func aPartialObjectKeepsTheBandsOtherFields() throws {
        let result = try GoFITSettingsUpdate.parse(["idle_alert": ["start": "08:00", "days": ["sat", "sun"]],
                                                    "heart_rate_warning": ["min_bpm": 50]], current: current)
        #expect(result == [
            .idleAlert(GoFITIdleAlert(enabled: true, days: [.saturday, .sunday], start: GoFITClockTime(hour: 8, minute: 0),
                                      end: GoFITClockTime(hour: 17, minute: 45), intervalMinutes: 90)),
            .heartRateWarning(GoFITHeartRateWarning(enabled: true, maxBPM: 170, minBPM: 50)),
        ])
        let profile = try GoFITSettingsUpdate.parse(["user_profile": ["weight_kg": 70]], current: current)
        #expect(profile == [.userProfile(GoFITUserProfile(heightMillimeters: 1755, weightHectograms: 700, age: 34, strideCentimeters: 72,
                                                          birthday: GoFITDate(year: 1990, month: 7, day: 15), gender: .female))])
    }

    @Test func withoutACurrentValueEveryFieldIsRequired() {
        expectInvalid(["idle_alert": ["enabled": true, "days": [], "start": "08:00", "end": "18:00"]], current: [:],
                      field: "idle_alert.interval_min", mentioning: ["required"])
        expectInvalid(["user_profile": ["height_cm": 180]], current: [:], field: "user_profile.weight_kg")
        expectInvalid(["find_my_band": ["vibration": true, "seconds": 5]], current: [:], field: "find_my_band.repeat")
    }

    @Test func heightAndWeightAreRoundedToTheBandsTenths() throws {
        let result = try GoFITSettingsUpdate.parse(["user_profile": ["height_cm": 175.55, "weight_kg": 82.04]], current: current)
        guard case .userProfile(let profile)? = result.first else { Issue.record("\(result)"); return }
        #expect(profile.heightMillimeters == 1756)
        #expect(profile.weightHectograms == 820)
    }

    @Test func timeFormatTakesTheStringOrTheNumber() throws {
        #expect(try GoFITSettingsUpdate.parse(["time_format": 12], current: [:]) == [.timeFormat(.twelveHour)])
        #expect(try GoFITSettingsUpdate.parse(["time_format": "12"], current: [:]) == [.timeFormat(.twelveHour)])
        #expect(try GoFITSettingsUpdate.parse(["time_format": 24], current: [:]) == [.timeFormat(.twentyFourHour)])
        expectInvalid(["time_format": 13], field: "time_format", mentioning: ["\"12\", \"24\""])
        expectInvalid(["time_format": "24h"], field: "time_format")
        expectInvalid(["time_format": 268], field: "time_format") // 268 & 0xFF would be 12
    }

    @Test func alarmsReplaceTheListAndMergeByID() throws {
        // Alarm 3 exists: only its time changes. Alarm 5 is new: everything but date and text is given.
        let result = try GoFITSettingsUpdate.parse(["alarms": [
            ["id": 3, "time": "21:00"],
            ["id": 5, "enabled": true, "category": "training", "days": ["sat"], "time": "10:00", "active": true],
        ]], current: current)
        #expect(result == [.alarms([
            GoFITAlarm(id: 3, enabled: false, category: .medicine, days: [], date: GoFITDate(year: 2024, month: 2, day: 29),
                       time: GoFITClockTime(hour: 21, minute: 0), active: false, text: "Pills"),
            GoFITAlarm(id: 5, enabled: true, category: .training, days: .saturday, date: nil,
                       time: GoFITClockTime(hour: 10, minute: 0), active: true, text: ""),
        ])])
        // null removes a date; [] removes every alarm.
        let cleared = try GoFITSettingsUpdate.parse(["alarms": [["id": 3, "date": nil]]], current: current)
        guard case .alarms(let alarms)? = cleared.first else { Issue.record("\(cleared)"); return }
        #expect(alarms.map(\.date) == [nil])
        #expect(try GoFITSettingsUpdate.parse(["alarms": []], current: current) == [.alarms([])])
        expectInvalid(["alarms": [["id": 7, "time": "06:00"]]], field: "alarms[0].enabled", mentioning: ["new alarm"])
    }

    @Test func unknownKeysAndFieldsAreRefusedByName() {
        expectInvalid(["step_goals": 8000], field: "step_goals", mentioning: ["unknown setting", "step_goal", "screen_lock"])
        expectInvalid(["idle_alert": ["enabled": true, "snooze": 5]], field: "idle_alert.snooze", mentioning: ["unknown field"])
        expectInvalid(["alarms": [["id": 0, "sound": "beep"]]], field: "alarms[0].sound", mentioning: ["unknown field"])
        expectInvalid(["alarms": [["time": "07:00", "volume": 3]]], field: "alarms[0].volume")
        expectInvalid(["user_profile": ["height": 180]], field: "user_profile.height")
    }

    @Test func wrongTypesNameTheField() {
        expectInvalid(["step_goal": "8000"], field: "step_goal")
        expectInvalid(["step_goal": 8000.5], field: "step_goal")
        expectInvalid(["auto_light_up": 1], field: "auto_light_up", mentioning: ["true or false"])
        expectInvalid(["screen_lock": "true"], field: "screen_lock")
        expectInvalid(["unit_system": "metres"], field: "unit_system", mentioning: ["\"metric\", \"imperial\""])
        expectInvalid(["handedness": 0], field: "handedness")
        expectInvalid(["language": "de"], field: "language", mentioning: ["\"zh_TW\""])
        expectInvalid(["idle_alert": true], field: "idle_alert", mentioning: ["JSON object"])
        expectInvalid(["idle_alert": ["start": 730]], field: "idle_alert.start", mentioning: ["must be a time \"HH:mm\""])
        expectInvalid(["idle_alert": ["days": "mon"]], field: "idle_alert.days")
        expectInvalid(["do_not_disturb": ["enabled": "yes"]], field: "do_not_disturb.enabled")
        expectInvalid(["user_profile": ["height_cm": "180"]], field: "user_profile.height_cm")
        expectInvalid(["user_profile": ["gender": "m"]], field: "user_profile.gender")
        expectInvalid(["user_profile": ["birthday": 19900715]], field: "user_profile.birthday")
        expectInvalid(["alarms": ["id": 0]], field: "alarms", mentioning: ["list"])
        expectInvalid(["alarms": [0]], field: "alarms[0]")
        expectInvalid(["alarms": [["id": "0"]]], field: "alarms[0].id")
        expectInvalid(["alarms": [["id": 0, "text": 5]]], field: "alarms[0].text")
        expectInvalid(["alarms": [["id": 0, "category": "lunch"]]], field: "alarms[0].category", mentioning: ["\"wake_up\"", "\"medicine\""])
    }

    @Test func valuesOutOfRangeNameTheFieldAndTheRange() {
        expectInvalid(["step_goal": 99], field: "step_goal", mentioning: ["100 to 100000"])
        expectInvalid(["step_goal": 100_001], field: "step_goal")
        expectInvalid(["step_goal": -8000], field: "step_goal")
        expectInvalid(["idle_alert": ["interval_min": 300]], field: "idle_alert.interval_min", mentioning: ["15 to 240"])
        expectInvalid(["heart_rate_timing": ["interval_min": 0]], field: "heart_rate_timing.interval_min", mentioning: ["1 to 240"])
        expectInvalid(["user_profile": ["height_cm": 250.1]], field: "user_profile.height_cm", mentioning: ["50.0 to 250.0"])
        expectInvalid(["user_profile": ["weight_kg": 9.9]], field: "user_profile.weight_kg", mentioning: ["10.0 to 300.0"])
        expectInvalid(["user_profile": ["age": 100]], field: "user_profile.age", mentioning: ["0 to 99"])
        expectInvalid(["user_profile": ["stride_cm": 29]], field: "user_profile.stride_cm")
        expectInvalid(["find_my_band": ["seconds": 0]], field: "find_my_band.seconds", mentioning: ["1 to 60"])
        expectInvalid(["find_my_phone": ["vibration_s": 61]], field: "find_my_phone.vibration_s", mentioning: ["0 to 60"])
        expectInvalid(["heart_rate_warning": ["max_bpm": 221]], field: "heart_rate_warning.max_bpm", mentioning: ["60 to 220"])
        expectInvalid(["heart_rate_warning": ["min_bpm": 29]], field: "heart_rate_warning.min_bpm", mentioning: ["30 to 150"])
        expectInvalid(["alarms": [["id": 10]]], field: "alarms[0].id", mentioning: ["0 to 9"])
    }

    @Test func badTimesDatesAndDays() {
        expectInvalid(["idle_alert": ["start": "7:5"]], field: "idle_alert.start", mentioning: ["\"7:5\""])
        expectInvalid(["do_not_disturb": ["end": "24:00"]], field: "do_not_disturb.end", mentioning: ["\"00:00\" to \"23:59\""])
        expectInvalid(["alarms": [["id": 0, "time": "07:60"]]], field: "alarms[0].time")
        expectInvalid(["user_profile": ["birthday": "2023-02-29"]], field: "user_profile.birthday", mentioning: ["yyyy-MM-dd"])
        expectInvalid(["alarms": [["id": 3, "date": "2023-02-29"]]], field: "alarms[0].date")
        expectInvalid(["idle_alert": ["days": ["mon", "funday"]]], field: "idle_alert.days", mentioning: ["\"funday\"", "\"sun\""])
        expectInvalid(["alarms": [["id": 0, "days": ["Mon"]]]], field: "alarms[0].days")
    }

    @Test func heartRateWarningMinMustBeBelowMax() {
        expectInvalid(["heart_rate_warning": ["min_bpm": 150, "max_bpm": 150]], field: "heart_rate_warning.min_bpm")
        // Only max given: the band's min (80) is kept, and max is the field named.
        expectInvalid(["heart_rate_warning": ["max_bpm": 60]],
                      current: [.heartRateWarning: .heartRateWarning(GoFITHeartRateWarning(enabled: true, maxBPM: 170, minBPM: 80))],
                      field: "heart_rate_warning.max_bpm", mentioning: ["80"])
    }

    @Test func alarmListLimits() {
        let eleven = DeviceValue.list((0..<11).map { index -> DeviceValue in ["id": .integer(Int64(index % 10)), "enabled": false] })
        expectInvalid(["alarms": eleven], field: "alarms", mentioning: ["at most 10"])
        expectInvalid(["alarms": [["id": 0, "enabled": true], ["id": 3], ["id": 0, "enabled": false]]],
                      field: "alarms[2].id", mentioning: ["alarms[0]"])
        expectInvalid(["alarms": [["id": 0, "text": .text(String(repeating: "a", count: 33))]]], field: "alarms[0].text", mentioning: ["33 bytes"])
        // Bytes, not characters: eleven three-byte characters are 33 bytes.
        expectInvalid(["alarms": [["id": 0, "text": .text(String(repeating: "日", count: 11))]]], field: "alarms[0].text")
        // Ten alarms of 20-byte texts need 1 + 10 × 32 bytes: more than a TLV holds.
        let tenLong = DeviceValue.list((0..<10).map { id -> DeviceValue in
            ["id": .integer(Int64(id)), "enabled": true, "category": "others", "days": [], "time": "12:00", "active": true,
             "text": .text(String(repeating: "t", count: 20))]
        })
        expectInvalid(["alarms": tenLong], current: [:], field: "alarms", mentioning: ["255"])
    }

    @Test func textsThatFitAreAccepted() throws {
        let text = String(repeating: "é", count: 16) // 32 bytes
        let result = try GoFITSettingsUpdate.parse(["alarms": [["id": 0, "text": .text(text)]]], current: current)
        guard case .alarms(let alarms)? = result.first else { Issue.record("\(result)"); return }
        #expect(alarms.map(\.text) == [text])
        #expect(try GoFITSetting(tlv: result[0].tlv()) == result[0])
    }

    @Test func oneBadFieldRefusesTheWholeRequest() {
        expectInvalid(["step_goal": 10000, "language": "en", "idle_alert": ["enabled": true, "interval_min": 5]],
                      field: "idle_alert.interval_min")
        expectInvalid(["screen_lock": true, "alarms": [["id": 0, "enabled": true], ["id": 3, "time": "25:00"]]],
                      field: "alarms[1].time")
    }

    @Test func aFieldKeptFromAnOutOfRangeCurrentValueIsNamed() {
        let broken: [GoFITSettingID: GoFITSetting] = [.idleAlert: .idleAlert(GoFITIdleAlert(
            enabled: false, days: [], start: GoFITClockTime(hour: 9, minute: 0), end: GoFITClockTime(hour: 17, minute: 0),
            intervalMinutes: 5))]
        expectInvalid(["idle_alert": ["enabled": true]], current: broken, field: "idle_alert.interval_min", mentioning: ["current"])
    }

    @Test func theRetainedStateHasEveryKey() {
        let object = GoFITSettingsUpdate.settingsObject(GoFITSettingExample.all.map(\.setting))
        #expect(Set(object.keys) == Set(GoFITSettingID.allCases.map(\.key)))
        #expect(object["do_not_disturb"] == ["enabled": true, "start": "22:30", "end": "06:15"])
        #expect(object["user_profile"]?["height_cm"] == 175.5)
    }
}

/// The settings the driver offers as controls accept exactly what the parser accepts: a user interface built from
/// them (Home Assistant's number, select and switch entities) cannot send a value the gateway would refuse.
@Suite struct GoFITSettingControlsTests {
    @Test func everyControlsRangeAndOptionsAreAccepted() throws {
        for setting in GoFITDriver.settings(state: [:]) {
            switch setting.kind {
            case .number(let range, _, _):
                for value in [range.lowerBound, range.upperBound] {
                    _ = try GoFITSettingsUpdate.parse([setting.key: .integer(value)], current: [:])
                }
                for value in [range.lowerBound - 1, range.upperBound + 1] {
                    #expect(throws: CommandError.self) { try GoFITSettingsUpdate.parse([setting.key: .integer(value)], current: [:]) }
                }
            case .choice(let options):
                #expect(!options.isEmpty)
                for option in options { _ = try GoFITSettingsUpdate.parse([setting.key: .text(option)], current: [:]) }
            case .toggle:
                for flag in [true, false] { _ = try GoFITSettingsUpdate.parse([setting.key: .flag(flag)], current: [:]) }
            case .numberChoice:
                Issue.record("\(setting.key): the band has no setting of a few numbers")
            }
        }
    }
}
