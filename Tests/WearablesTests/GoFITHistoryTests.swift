import Testing

@testable import Wearables

/// History records and pages against docs/protocols/gofit.md, "History records": every field little-endian,
/// byte vectors written out field by field.
@Suite("GoFIT history records and pages")
struct GoFITHistoryTests {
    /// 2018-06-25 11:00:00 UTC, 1529924400 = 0x5B30CB30.
    static let timestamp: UInt32 = 1_529_924_400

    // MARK: Fixed-size records

    static let stepBytes: [UInt8] = [
        0x30, 0xCB, 0x30, 0x5B, // ts 1529924400
        0xD2, 0x04, // 1234 steps
        0xDB, 0x03, // 987 m
        0x38, 0x00, // 56 kcal
    ]
    static let step = GoFITStepRecord(timestamp: timestamp, steps: 1234, distanceMeters: 987, caloriesKcal: 56)

    @Test("kinds 1–5 are steps, sleep, heart_rate, spo2, activity")
    func kinds() {
        #expect(GoFITHistoryKind.allCases.map(\.rawValue) == [1, 2, 3, 4, 5])
        #expect(GoFITHistoryKind.allCases.map(\.topicKind) == ["steps", "sleep", "heart_rate", "spo2", "activity"])
        #expect(GoFITHistoryKind.allCases.map(\.fixedRecordLength) == [10, 5, 5, 5, nil])
    }

    @Test("a steps record is ts u32, steps u16, distance u16 (m), calories u16 (kcal): 10 bytes")
    func stepRecord() throws {
        #expect(Self.step.encoded() == Self.stepBytes)
        #expect(try GoFITStepRecord(decoding: Self.stepBytes) == Self.step)
        #expect(try GoFITHistoryRecord(decoding: Self.stepBytes, kind: .steps) == .steps(Self.step))
        expectWrongLengthsTruncated(Self.stepBytes) { bytes throws(GATTCodecError) in _ = try GoFITStepRecord(decoding: bytes) }
    }

    @Test("a sleep record is ts u32, score u8 from 0 (deep) to 5 (light); 6 is outOfRange")
    func sleepRecord() throws {
        let bytes: [UInt8] = [0x30, 0xCB, 0x30, 0x5B, 0x05]
        #expect(try GoFITSleepRecord(decoding: bytes) == GoFITSleepRecord(timestamp: Self.timestamp, score: 5))
        #expect(GoFITSleepRecord(timestamp: Self.timestamp, score: 0).encoded() == [0x30, 0xCB, 0x30, 0x5B, 0x00])
        #expect(throws: GATTCodecError.outOfRange(field: "sleep score", value: 6)) {
            try GoFITSleepRecord(decoding: [0x30, 0xCB, 0x30, 0x5B, 0x06])
        }
        expectWrongLengthsTruncated(bytes) { bytes throws(GATTCodecError) in _ = try GoFITSleepRecord(decoding: bytes) }
    }

    @Test("a heart-rate record is ts u32, pulse u8 (bpm)")
    func heartRateRecord() throws {
        let bytes: [UInt8] = [0x30, 0xCB, 0x30, 0x5B, 0xC8]
        #expect(try GoFITHeartRateRecord(decoding: bytes) == GoFITHeartRateRecord(timestamp: Self.timestamp, bpm: 200))
        #expect(GoFITHeartRateRecord(timestamp: Self.timestamp, bpm: 200).encoded() == bytes)
        expectWrongLengthsTruncated(bytes) { bytes throws(GATTCodecError) in _ = try GoFITHeartRateRecord(decoding: bytes) }
    }

    @Test("an SpO2 record is ts u32, SpO2 u8 (%); 100 is the most, 101 outOfRange")
    func spo2Record() throws {
        let bytes: [UInt8] = [0x30, 0xCB, 0x30, 0x5B, 0x64]
        #expect(try GoFITSpO2Record(decoding: bytes) == GoFITSpO2Record(timestamp: Self.timestamp, percent: 100))
        #expect(GoFITSpO2Record(timestamp: Self.timestamp, percent: 100).encoded() == bytes)
        #expect(throws: GATTCodecError.outOfRange(field: "SpO2", value: 101)) {
            try GoFITSpO2Record(decoding: [0x30, 0xCB, 0x30, 0x5B, 0x65])
        }
        expectWrongLengthsTruncated(bytes) { bytes throws(GATTCodecError) in _ = try GoFITSpO2Record(decoding: bytes) }
    }

    // MARK: Activities

    /// Sydney Opera House, 2.5 m below the datum, 3.10 m/s, lap 2.
    static let pointBytes: [UInt8] = [
        0x6C, 0xCB, 0x30, 0x5B, // ts 1529924460
        0x01, // valid
        0x02, // flag
        0x3B, 0x07, 0xD0, 0xEB, // latitude −338688197 × 1e-7 °
        0x1B, 0xB5, 0x20, 0x5A, // longitude 1512092955 × 1e-7 °
        0xE7, 0xFF, // elevation −25 dm
        0x36, 0x01, // speed 310 cm/s
        0xB0, 0x04, 0x00, 0x00, // accumulated distance 1200 m
        0xA4, 0x01, 0x00, 0x00, // accumulated duration 420 s
        0x8E, // heart rate 142
        0x8A, 0x02, 0x00, 0x00, // accumulated steps 650
        0x02, // lap 2
        0x00, 0x00, // bike speed 0
        0xAB, // cadence 171
    ]
    static let point = GoFITGPSPoint(
        timestamp: 1_529_924_460, valid: true, flag: 2, latitudeE7: -338_688_197, longitudeE7: 1_512_092_955,
        elevationDecimeters: -25, speedCentimetersPerSecond: 310, accumulatedDistanceMeters: 1200,
        accumulatedDurationSeconds: 420, heartRate: 142, accumulatedSteps: 650, lap: 2, bikeSpeedCentimetersPerSecond: 0,
        cadence: 171)

    static let lapBytes: [UInt8] = [
        0x30, 0xCB, 0x30, 0x5B, // start 1529924400
        0x58, 0x02, 0x00, 0x00, // 600 s
        0x49, 0x06, 0x00, 0x00, // 1609 m
        0x0C, 0x01, // 268 cm/s
        0x96, // average heart rate 150
        0x5F, 0x00, // 95 kcal
        0xDC, 0x05, 0x00, 0x00, // 1500 steps
        0xA5, 0xB4, // cadence 165 average, 180 maximum
    ]
    static let lap = GoFITLap(
        start: timestamp, durationSeconds: 600, distanceMeters: 1609, averageSpeedCentimetersPerSecond: 268,
        averageHeartRate: 150, caloriesKcal: 95, steps: 1500, averageCadence: 165, maximumCadence: 180)

    /// Length 27 + 35 + 23 = 85, then the summary of a 30-minute run in UTC+8 with one point and one lap.
    static let activityHeaderBytes: [UInt8] = [
        0x55, 0x00, // length 85
        0x30, 0xCB, 0x30, 0x5B, // start 1529924400
        0xE0, 0x01, // +480 minutes
        0x03, // type 3
        0x02, // NMEA version 2
        0x08, 0x07, 0x00, 0x00, // 1800 s
        0x68, 0x10, 0x00, 0x00, // 4200 m
        0x36, 0x01, // 310 kcal
        0x50, 0x14, 0x00, 0x00, // 5200 steps
        0x8A, 0xAB, // heart rate 138 average, 171 maximum
        0x01, 0x00, // 1 point
        0x01, // 1 lap
    ]
    static let activity = GoFITActivity(
        start: timestamp, timeZoneOffsetMinutes: 480, typeID: 3, nmeaVersion: 2, durationSeconds: 1800,
        distanceMeters: 4200, caloriesKcal: 310, steps: 5200, averageHeartRate: 138, maximumHeartRate: 171,
        points: [point], laps: [lap])

    @Test("a GPS point is 35 bytes: ts, valid, flag, lat/lon i32 (1e-7 °), elevation i16 (dm), speed, … cadence")
    func gpsPoint() throws {
        #expect(Self.pointBytes.count == GoFITGPSPoint.length)
        #expect(Self.point.encoded() == Self.pointBytes)
        #expect(try GoFITGPSPoint(decoding: Self.pointBytes) == Self.point)
        expectWrongLengthsTruncated(Self.pointBytes) { bytes throws(GATTCodecError) in _ = try GoFITGPSPoint(decoding: bytes) }
        var invalid = Self.pointBytes
        invalid[4] = 0x00
        #expect(try GoFITGPSPoint(decoding: invalid).valid == false)
        invalid[4] = 0x02
        #expect(throws: GATTCodecError.reservedValue(field: "GPS valid", value: 2)) { try GoFITGPSPoint(decoding: invalid) }
    }

    @Test("a lap is 23 bytes: start, duration, distance, average speed, heart rate, calories, steps, cadences")
    func lapRecord() throws {
        #expect(Self.lapBytes.count == GoFITLap.length)
        #expect(Self.lap.encoded() == Self.lapBytes)
        #expect(try GoFITLap(decoding: Self.lapBytes) == Self.lap)
        expectWrongLengthsTruncated(Self.lapBytes) { bytes throws(GATTCodecError) in _ = try GoFITLap(decoding: bytes) }
    }

    @Test("an activity is length u16, a 27-byte summary, its points, its laps; the length counts what follows it")
    func activityRecord() throws {
        let bytes = Self.activityHeaderBytes + Self.pointBytes + Self.lapBytes
        #expect(bytes.count == 2 + 85)
        #expect(Self.activity.encoded() == bytes)
        #expect(try GoFITActivity(decoding: bytes) == Self.activity)
        #expect(try GoFITHistoryRecord(decoding: bytes, kind: .activity) == .activity(Self.activity))
        expectWrongLengthsTruncated(bytes) { bytes throws(GATTCodecError) in _ = try GoFITActivity(decoding: bytes) }

        let bare = GoFITActivity(start: 1, timeZoneOffsetMinutes: -210, typeID: 0, nmeaVersion: 0, durationSeconds: 0,
                                 distanceMeters: 0, caloriesKcal: 0, steps: 0, averageHeartRate: 0, maximumHeartRate: 0)
        #expect(bare.encoded().count == 2 + 27)
        #expect(Array(bare.encoded()[0..<2]) == [27, 0])
        #expect(Array(bare.encoded()[6..<8]) == [0x2E, 0xFF], "−210 minutes as i16")
        #expect(try GoFITActivity(decoding: bare.encoded()) == bare)
    }

    @Test("an activity whose length disagrees with its counts is truncated, not read into the next record")
    func activityLengthDisagrees() {
        var longer = Self.activityHeaderBytes + Self.pointBytes + Self.lapBytes + [0x00]
        longer[0] = 86
        #expect(throws: GATTCodecError.truncated(expected: 2 + 85, actual: 2 + 86)) { try GoFITActivity(decoding: longer) }
        var moreLaps = Self.activityHeaderBytes + Self.pointBytes + Self.lapBytes
        moreLaps[28] = 2 // two laps announced, one carried
        #expect(throws: GATTCodecError.truncated(expected: 2 + 108, actual: 2 + 85)) { try GoFITActivity(decoding: moreLaps) }
        var shortLength = Self.activityHeaderBytes
        shortLength[0] = 20 // less than a summary
        #expect(throws: GATTCodecError.self) { try GoFITActivity(decoding: Array(shortLength.prefix(22))) }
    }

    @Test("an activity of 1801 points or 101 laps is outOfRange; 1800 points and 100 laps decode")
    func activityLimits() throws {
        var largest = Self.activity
        largest.points = Array(repeating: Self.point, count: 1800)
        largest.laps = Array(repeating: Self.lap, count: 100)
        #expect(try GoFITActivity(decoding: largest.encoded()) == largest)

        var tooManyPoints = Self.activity
        tooManyPoints.points = Array(repeating: Self.point, count: 1801)
        #expect(throws: GATTCodecError.outOfRange(field: "GPS point count", value: 1801)) {
            try GoFITActivity(decoding: tooManyPoints.encoded())
        }
        var tooManyLaps = Self.activity
        tooManyLaps.laps = Array(repeating: Self.lap, count: 101)
        #expect(throws: GATTCodecError.outOfRange(field: "lap count", value: 101)) {
            try GoFITActivity(decoding: tooManyLaps.encoded())
        }
    }

    // MARK: Pages

    static let stepPageBytes: [UInt8] = [
        0x01, // kind steps
        0x03, 0x00, // page 3
        0x02, // 2 records
        0x30, 0xCB, 0x30, 0x5B, 0xD2, 0x04, 0xDB, 0x03, 0x38, 0x00,
        0xE0, 0xCF, 0x30, 0x5B, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 1529925600, nothing walked
    ]
    static let stepPage = GoFITHistoryPage(kind: .steps, page: 3, records: [
        .steps(step), .steps(GoFITStepRecord(timestamp: timestamp + 1200, steps: 0, distanceMeters: 0, caloriesKcal: 0)),
    ])

    @Test("a page is kind u8, page u16, record count u8, then the records")
    func stepPage() throws {
        #expect(Self.stepPage.encoded() == Self.stepPageBytes)
        #expect(try GoFITHistoryPage(decoding: Self.stepPageBytes) == Self.stepPage)
        #expect(Self.stepPage.records.map(\.timestamp) == [1_529_924_400, 1_529_925_600])
        #expect(Self.stepPage.records.allSatisfy { $0.kind == .steps })
        let empty = GoFITHistoryPage(kind: .spo2, page: 0, records: [])
        #expect(empty.encoded() == [0x04, 0x00, 0x00, 0x00])
        #expect(try GoFITHistoryPage(decoding: [0x04, 0x00, 0x00, 0x00]) == empty)
    }

    @Test("an activity page carries its one activity with the length prefix")
    func activityPage() throws {
        let page = GoFITHistoryPage(kind: .activity, page: 0x0100, records: [.activity(Self.activity)])
        let bytes: [UInt8] = [0x05, 0x00, 0x01, 0x01] + Self.activityHeaderBytes + Self.pointBytes + Self.lapBytes
        #expect(page.encoded() == bytes)
        #expect(try GoFITHistoryPage(decoding: bytes) == page)
        #expect(page.records[0].timestamp == Self.timestamp)
        #expect(page.records[0].kind == .activity)
    }

    @Test("a count larger than the records carried is truncated; smaller leaves trailing bytes, also truncated")
    func pageCountMismatch() {
        var more = Self.stepPageBytes
        more[3] = 3
        // The third record's timestamp is the first field that does not fit.
        #expect(throws: GATTCodecError.truncated(expected: 4 + 24, actual: 4 + 20)) { try GoFITHistoryPage(decoding: more) }
        var fewer = Self.stepPageBytes
        fewer[3] = 1
        #expect(throws: GATTCodecError.truncated(expected: 4 + 10, actual: 4 + 20)) { try GoFITHistoryPage(decoding: fewer) }
        #expect(throws: GATTCodecError.truncated(expected: 4 + 20, actual: 4 + 21)) {
            try GoFITHistoryPage(decoding: Self.stepPageBytes + [0x00])
        }
        expectWrongLengthsTruncated(Self.stepPageBytes) { bytes throws(GATTCodecError) in _ = try GoFITHistoryPage(decoding: bytes) }
    }

    @Test("records of another kind do not frame: four 5-byte heart-rate records in a steps page of count 4")
    func pageWrongKind() {
        let heartRates = (0..<4).flatMap { GoFITHeartRateRecord(timestamp: Self.timestamp + UInt32($0), bpm: 70).encoded() }
        #expect(throws: GATTCodecError.truncated(expected: 4 + 24, actual: 4 + 20)) {
            try GoFITHistoryPage(decoding: [0x01, 0x00, 0x00, 0x04] + heartRates)
        }
        // Read as a heart-rate page of count 2, ten step bytes leave trailing ones.
        #expect(throws: GATTCodecError.truncated(expected: 4 + 10, actual: 4 + 20)) {
            try GoFITHistoryPage(decoding: [0x03, 0x00, 0x00, 0x02] + Self.stepBytes + Self.stepBytes)
        }
    }

    @Test("more than 64 records, or more than one activity, is outOfRange(record count); an unknown kind unknownIdentifier")
    func pageLimits() throws {
        let sixtyFour = GoFITHistoryPage(kind: .heartRate, page: 0, records: Array(
            repeating: .heartRate(GoFITHeartRateRecord(timestamp: 1, bpm: 60)), count: 64))
        #expect(try GoFITHistoryPage(decoding: sixtyFour.encoded()) == sixtyFour)
        var sixtyFive = sixtyFour
        sixtyFive.records.append(.heartRate(GoFITHeartRateRecord(timestamp: 2, bpm: 61)))
        #expect(throws: GATTCodecError.outOfRange(field: "record count", value: 65)) {
            try GoFITHistoryPage(decoding: sixtyFive.encoded())
        }
        let twoActivities = GoFITHistoryPage(kind: .activity, page: 0, records: [.activity(Self.activity), .activity(Self.activity)])
        #expect(throws: GATTCodecError.outOfRange(field: "record count", value: 2)) {
            try GoFITHistoryPage(decoding: twoActivities.encoded())
        }
        #expect(throws: GATTCodecError.unknownIdentifier(field: "kind", value: 0)) {
            try GoFITHistoryPage(decoding: [0x00, 0x00, 0x00, 0x00])
        }
    }

    @Test("a record out of range inside a page fails the page")
    func pageWithBadRecord() {
        #expect(throws: GATTCodecError.outOfRange(field: "sleep score", value: 9)) {
            try GoFITHistoryPage(decoding: [0x02, 0x00, 0x00, 0x02, 0x30, 0xCB, 0x30, 0x5B, 0x01, 0x88, 0xCD, 0x30, 0x5B, 0x09])
        }
    }
}

/// `full` decodes; every shorter prefix is `truncated(expected: > n, actual: n)`, and one byte more is
/// `truncated(expected: full.count, actual: full.count + 1)`: the layouts have no room for trailing bytes.
func expectWrongLengthsTruncated(
    _ full: [UInt8], sourceLocation: SourceLocation = #_sourceLocation,
    _ decode: ([UInt8]) throws(GATTCodecError) -> Void
) {
    #expect(throws: Never.self, sourceLocation: sourceLocation) { try decode(full) }
    for length in 0..<full.count {
        do {
            try decode(Array(full.prefix(length)))
            Issue.record("a \(length)-byte prefix decoded", sourceLocation: sourceLocation)
        } catch {
            guard case .truncated(let expected, let actual) = error, actual == length, expected > length else {
                Issue.record("a \(length)-byte prefix threw \(error)", sourceLocation: sourceLocation)
                continue
            }
        }
    }
    #expect(throws: GATTCodecError.truncated(expected: full.count, actual: full.count + 1), sourceLocation: sourceLocation) {
        try decode(full + [0x00])
    }
}
