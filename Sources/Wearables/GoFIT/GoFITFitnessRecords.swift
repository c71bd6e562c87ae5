/// History records as the device model's `FitnessRecord`: the fields of `fitness/<kind>` (docs/protocols/gofit.md,
/// "MQTT payloads of the records"), in SI units or with the unit in the key, times as Unix milliseconds.
extension GoFITHistoryRecord {
    /// The length of a steps bucket and of a sleep period.
    static let stepsPeriodSeconds: Int64 = 1200
    static let sleepPeriodSeconds: Int64 = 600

    /// `serial` makes the id stable across re-downloads: `<serial>-<kind>-<ts>`, ts in Unix seconds.
    public func fitnessRecord(serial: String) -> FitnessRecord {
        let kindName = kind.topicKind
        return FitnessRecord(kind: kindName, id: "\(serial)-\(kindName)-\(timestamp)",
                             timestamp: Self.milliseconds(timestamp), fields: fields)
    }

    var fields: [String: DeviceValue] {
        switch self {
        case .steps(let record):
            [
                "steps": .integer(Int64(record.steps)),
                "distance_m": .integer(Int64(record.distanceMeters)),
                "calories_kcal": .integer(Int64(record.caloriesKcal)),
                "period_s": .integer(Self.stepsPeriodSeconds),
            ]
        case .sleep(let record):
            ["score": .integer(Int64(record.score)), "period_s": .integer(Self.sleepPeriodSeconds)]
        case .heartRate(let record):
            ["bpm": .integer(Int64(record.bpm))]
        case .spo2(let record):
            ["percent": .integer(Int64(record.percent))]
        case .activity(let activity):
            [
                "type_id": .integer(Int64(activity.typeID)),
                "timezone": .text(Self.timeZone(offsetMinutes: activity.timeZoneOffsetMinutes)),
                "nmea_version": .integer(Int64(activity.nmeaVersion)),
                "duration_s": .integer(Int64(activity.durationSeconds)),
                "distance_m": .integer(Int64(activity.distanceMeters)),
                "calories_kcal": .integer(Int64(activity.caloriesKcal)),
                "steps": .integer(Int64(activity.steps)),
                "avg_heart_rate": .integer(Int64(activity.averageHeartRate)),
                "max_heart_rate": .integer(Int64(activity.maximumHeartRate)),
                "gps": .list(activity.points.map { .object(Self.fields(of: $0)) }),
                "laps": .list(activity.laps.map { .object(Self.fields(of: $0)) }),
            ]
        }
    }

    static func fields(of point: GoFITGPSPoint) -> [String: DeviceValue] {
        [
            "ts": .integer(milliseconds(point.timestamp)),
            "valid": .flag(point.valid),
            "flag": .integer(Int64(point.flag)),
            "latitude": .number(Double(point.latitudeE7) / 1e7),
            "longitude": .number(Double(point.longitudeE7) / 1e7),
            "elevation_m": .number(Double(point.elevationDecimeters) / 10),
            "speed_mps": .number(Double(point.speedCentimetersPerSecond) / 100),
            "distance_m": .integer(Int64(point.accumulatedDistanceMeters)),
            "duration_s": .integer(Int64(point.accumulatedDurationSeconds)),
            "heart_rate": .integer(Int64(point.heartRate)),
            "steps": .integer(Int64(point.accumulatedSteps)),
            "lap": .integer(Int64(point.lap)),
            "bike_speed_mps": .number(Double(point.bikeSpeedCentimetersPerSecond) / 100),
            "cadence": .integer(Int64(point.cadence)),
        ]
    }

    static func fields(of lap: GoFITLap) -> [String: DeviceValue] {
        [
            "ts": .integer(milliseconds(lap.start)),
            "duration_s": .integer(Int64(lap.durationSeconds)),
            "distance_m": .integer(Int64(lap.distanceMeters)),
            "speed_mps": .number(Double(lap.averageSpeedCentimetersPerSecond) / 100),
            "avg_heart_rate": .integer(Int64(lap.averageHeartRate)),
            "calories_kcal": .integer(Int64(lap.caloriesKcal)),
            "steps": .integer(Int64(lap.steps)),
            "avg_cadence": .integer(Int64(lap.averageCadence)),
            "max_cadence": .integer(Int64(lap.maximumCadence)),
        ]
    }

    static func milliseconds(_ seconds: UInt32) -> Int64 { Int64(seconds) * 1000 }

    /// `+08:00`, `-03:30`, `+00:00`: the ISO 8601 offset the SDK's `timezone` string carries.
    static func timeZone(offsetMinutes: Int16) -> String {
        let minutes = abs(Int(offsetMinutes))
        func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return (offsetMinutes < 0 ? "-" : "+") + twoDigits(minutes / 60) + ":" + twoDigits(minutes % 60)
    }
}
