import Testing

@testable import Wearables

/// What `fitness/<kind>` carries for each history record (docs/protocols/gofit.md, "MQTT payloads of the
/// records"): field names with SI units or the unit in the key, times in Unix milliseconds.
@Suite("GoFIT history records as fitness records")
struct GoFITFitnessRecordTests {
    static let serial = "CXC1234567"

    @Test("a steps bucket is fitness/steps with id CXC1234567-steps-1529924400: steps, distance_m, calories_kcal, period_s 1200")
    func steps() {
        let record = GoFITHistoryRecord.steps(GoFITHistoryTests.step).fitnessRecord(serial: Self.serial)
        #expect(record == FitnessRecord(
            kind: "steps", id: "CXC1234567-steps-1529924400", timestamp: 1_529_924_400_000,
            fields: ["steps": 1234, "distance_m": 987, "calories_kcal": 56, "period_s": 1200]))
    }

    @Test("a sleep period is fitness/sleep: score (0 deep … 5 light) and period_s 600")
    func sleep() {
        let record = GoFITHistoryRecord.sleep(GoFITSleepRecord(timestamp: 1_529_924_400, score: 3)).fitnessRecord(serial: "S1")
        #expect(record == FitnessRecord(kind: "sleep", id: "S1-sleep-1529924400", timestamp: 1_529_924_400_000,
                                        fields: ["score": 3, "period_s": 600]))
    }

    @Test("a pulse is fitness/heart_rate with bpm; a blood-oxygen reading fitness/spo2 with percent")
    func heartRateAndSpO2() {
        let pulse = GoFITHistoryRecord.heartRate(GoFITHeartRateRecord(timestamp: 1_700_000_000, bpm: 72)).fitnessRecord(serial: "S1")
        #expect(pulse == FitnessRecord(kind: "heart_rate", id: "S1-heart_rate-1700000000", timestamp: 1_700_000_000_000,
                                       fields: ["bpm": 72]))
        let oxygen = GoFITHistoryRecord.spo2(GoFITSpO2Record(timestamp: 1_700_000_060, percent: 97)).fitnessRecord(serial: "S1")
        #expect(oxygen == FitnessRecord(kind: "spo2", id: "S1-spo2-1700000060", timestamp: 1_700_000_060_000,
                                        fields: ["percent": 97]))
    }

    @Test("an activity is fitness/activity keyed by its start: summary, timezone +08:00, gps and laps lists")
    func activity() {
        let record = GoFITHistoryRecord.activity(GoFITHistoryTests.activity).fitnessRecord(serial: Self.serial)
        #expect(record.kind == "activity")
        #expect(record.id == "CXC1234567-activity-1529924400")
        #expect(record.timestamp == 1_529_924_400_000)
        let expected: [String: DeviceValue] = [
            "type_id": 3, "timezone": "+08:00", "nmea_version": 2, "duration_s": 1800, "distance_m": 4200,
            "calories_kcal": 310, "steps": 5200, "avg_heart_rate": 138, "max_heart_rate": 171,
            "gps": [[
                "ts": 1_529_924_460_000, "valid": true, "flag": 2, "latitude": -33.8688197, "longitude": 151.2092955,
                "elevation_m": -2.5, "speed_mps": 3.1, "distance_m": 1200, "duration_s": 420, "heart_rate": 142,
                "steps": 650, "lap": 2, "bike_speed_mps": 0.0, "cadence": 171,
            ]],
            "laps": [[
                "ts": 1_529_924_400_000, "duration_s": 600, "distance_m": 1609, "speed_mps": 2.68, "avg_heart_rate": 150,
                "calories_kcal": 95, "steps": 1500, "avg_cadence": 165, "max_cadence": 180,
            ]],
        ]
        #expect(Set(record.fields.keys) == Set(expected.keys))
        for (key, value) in expected {
            #expect(record.fields[key] == value, "\(key)")
        }
    }

    @Test("coordinates, elevation and speeds are Doubles in degrees, metres and m/s; counts stay integers")
    func units() throws {
        let record = GoFITHistoryRecord.activity(GoFITHistoryTests.activity).fitnessRecord(serial: Self.serial)
        let point = try #require(record.fields["gps"]?.list?.first)
        #expect(point["latitude"] == .number(-33.8688197))
        #expect(point["elevation_m"] == .number(-2.5))
        #expect(point["speed_mps"] == .number(3.1))
        #expect(point["steps"] == .integer(650))
        #expect(point["ts"] == .integer(1_529_924_460_000))
        let lap = try #require(record.fields["laps"]?.list?.first)
        #expect(lap["speed_mps"] == .number(2.68))
        #expect(lap["distance_m"] == .integer(1609))
    }

    @Test("the time zone is ±HH:MM from the offset in minutes east of UTC", arguments: [
        (Int16(480), "+08:00"), (0, "+00:00"), (-210, "-03:30"), (330, "+05:30"), (-720, "-12:00"), (845, "+14:05"),
    ] as [(Int16, String)])
    func timeZone(minutes: Int16, text: String) {
        var activity = GoFITHistoryTests.activity
        activity.timeZoneOffsetMinutes = minutes
        #expect(GoFITHistoryRecord.activity(activity).fitnessRecord(serial: "S").fields["timezone"] == .text(text))
    }

    @Test("an activity without GPS or laps still has both keys, as empty lists")
    func emptyTrack() {
        var activity = GoFITHistoryTests.activity
        activity.points = []
        activity.laps = []
        let fields = GoFITHistoryRecord.activity(activity).fitnessRecord(serial: "S").fields
        #expect(fields["gps"] == .list([]))
        #expect(fields["laps"] == .list([]))
    }
}
