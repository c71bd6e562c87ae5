/// The five kinds of fitness history a band keeps (docs/protocols/gofit.md, "History records").
public enum GoFITHistoryKind: UInt8, Sendable, CaseIterable {
    case steps = 1
    case sleep
    case heartRate
    case spo2
    case activity

    /// The `<kind>` of the `fitness/<kind>` topic and of the records' ids.
    public var topicKind: String {
        switch self {
        case .steps: "steps"
        case .sleep: "sleep"
        case .heartRate: "heart_rate"
        case .spo2: "spo2"
        case .activity: "activity"
        }
    }

    /// The size of one record, nil for activities, which carry their own length.
    public var fixedRecordLength: Int? {
        switch self {
        case .steps: GoFITStepRecord.length
        case .sleep, .heartRate, .spo2: 5
        case .activity: nil
        }
    }
}

/// A 20-minute bucket of walking: ts u32 (its start), steps u16, distance u16 (m), calories u16 (kcal).
public struct GoFITStepRecord: Sendable, Equatable, ByteLayout {
    public static let length = 10

    public var timestamp: UInt32
    public var steps: UInt16
    public var distanceMeters: UInt16
    public var caloriesKcal: UInt16

    public init(timestamp: UInt32, steps: UInt16, distanceMeters: UInt16, caloriesKcal: UInt16) {
        self.timestamp = timestamp
        self.steps = steps
        self.distanceMeters = distanceMeters
        self.caloriesKcal = caloriesKcal
    }

    public init(decoding bytes: [UInt8]) throws(GATTCodecError) { try self.init(whole: bytes) }

    package init(reading reader: inout ByteReader) throws(GATTCodecError) {
        self.init(timestamp: try reader.read(UInt32.self), steps: try reader.read(UInt16.self),
                  distanceMeters: try reader.read(UInt16.self), caloriesKcal: try reader.read(UInt16.self))
    }

    public func encoded() -> [UInt8] { wholeBytes }

    package func write(to writer: inout ByteWriter) {
        writer.write(timestamp)
        writer.write(steps)
        writer.write(distanceMeters)
        writer.write(caloriesKcal)
    }
}

/// A 10-minute period of sleep: ts u32 (its start), score u8 from 0 (deep) to 5 (light).
public struct GoFITSleepRecord: Sendable, Equatable, ByteLayout {
    public static let maximumScore: UInt8 = 5

    public var timestamp: UInt32
    public var score: UInt8

    public init(timestamp: UInt32, score: UInt8) {
        self.timestamp = timestamp
        self.score = score
    }

    public init(decoding bytes: [UInt8]) throws(GATTCodecError) { try self.init(whole: bytes) }

    package init(reading reader: inout ByteReader) throws(GATTCodecError) {
        let timestamp = try reader.read(UInt32.self)
        let score = try reader.readUInt8()
        guard score <= Self.maximumScore else { throw .outOfRange(field: "sleep score", value: Int(score)) }
        self.init(timestamp: timestamp, score: score)
    }

    public func encoded() -> [UInt8] { wholeBytes }

    package func write(to writer: inout ByteWriter) {
        writer.write(timestamp)
        writer.write(score)
    }
}

/// One pulse reading: ts u32, pulse u8 (bpm).
public struct GoFITHeartRateRecord: Sendable, Equatable, ByteLayout {
    public var timestamp: UInt32
    public var bpm: UInt8

    public init(timestamp: UInt32, bpm: UInt8) {
        self.timestamp = timestamp
        self.bpm = bpm
    }

    public init(decoding bytes: [UInt8]) throws(GATTCodecError) { try self.init(whole: bytes) }

    package init(reading reader: inout ByteReader) throws(GATTCodecError) {
        self.init(timestamp: try reader.read(UInt32.self), bpm: try reader.readUInt8())
    }

    public func encoded() -> [UInt8] { wholeBytes }

    package func write(to writer: inout ByteWriter) {
        writer.write(timestamp)
        writer.write(bpm)
    }
}

/// One blood-oxygen reading: ts u32, SpO2 u8 (%, at most 100).
public struct GoFITSpO2Record: Sendable, Equatable, ByteLayout {
    public var timestamp: UInt32
    public var percent: UInt8

    public init(timestamp: UInt32, percent: UInt8) {
        self.timestamp = timestamp
        self.percent = percent
    }

    public init(decoding bytes: [UInt8]) throws(GATTCodecError) { try self.init(whole: bytes) }

    package init(reading reader: inout ByteReader) throws(GATTCodecError) {
        let timestamp = try reader.read(UInt32.self)
        let percent = try reader.readUInt8()
        guard percent <= 100 else { throw .outOfRange(field: "SpO2", value: Int(percent)) }
        self.init(timestamp: timestamp, percent: percent)
    }

    public func encoded() -> [UInt8] { wholeBytes }

    package func write(to writer: inout ByteWriter) {
        writer.write(timestamp)
        writer.write(percent)
    }
}

/// One GPS fix of an activity, the SDK's GPS data object — 35 bytes.
public struct GoFITGPSPoint: Sendable, Equatable, ByteLayout {
    public static let length = 35

    public var timestamp: UInt32
    public var valid: Bool
    public var flag: UInt8
    /// 1e-7 degrees, north positive.
    public var latitudeE7: Int32
    /// 1e-7 degrees, east positive.
    public var longitudeE7: Int32
    public var elevationDecimeters: Int16
    public var speedCentimetersPerSecond: UInt16
    public var accumulatedDistanceMeters: UInt32
    public var accumulatedDurationSeconds: UInt32
    public var heartRate: UInt8
    public var accumulatedSteps: UInt32
    public var lap: UInt8
    public var bikeSpeedCentimetersPerSecond: UInt16
    public var cadence: UInt8

    public init(
        timestamp: UInt32, valid: Bool, flag: UInt8, latitudeE7: Int32, longitudeE7: Int32, elevationDecimeters: Int16,
        speedCentimetersPerSecond: UInt16, accumulatedDistanceMeters: UInt32, accumulatedDurationSeconds: UInt32,
        heartRate: UInt8, accumulatedSteps: UInt32, lap: UInt8, bikeSpeedCentimetersPerSecond: UInt16, cadence: UInt8
    ) {
        self.timestamp = timestamp
        self.valid = valid
        self.flag = flag
        self.latitudeE7 = latitudeE7
        self.longitudeE7 = longitudeE7
        self.elevationDecimeters = elevationDecimeters
        self.speedCentimetersPerSecond = speedCentimetersPerSecond
        self.accumulatedDistanceMeters = accumulatedDistanceMeters
        self.accumulatedDurationSeconds = accumulatedDurationSeconds
        self.heartRate = heartRate
        self.accumulatedSteps = accumulatedSteps
        self.lap = lap
        self.bikeSpeedCentimetersPerSecond = bikeSpeedCentimetersPerSecond
        self.cadence = cadence
    }

    public init(decoding bytes: [UInt8]) throws(GATTCodecError) { try self.init(whole: bytes) }

    package init(reading reader: inout ByteReader) throws(GATTCodecError) {
        timestamp = try reader.read(UInt32.self)
        valid = try reader.readFlag(field: "GPS valid")
        flag = try reader.readUInt8()
        latitudeE7 = try reader.readInt32()
        longitudeE7 = try reader.readInt32()
        elevationDecimeters = try reader.readInt16()
        speedCentimetersPerSecond = try reader.read(UInt16.self)
        accumulatedDistanceMeters = try reader.read(UInt32.self)
        accumulatedDurationSeconds = try reader.read(UInt32.self)
        heartRate = try reader.readUInt8()
        accumulatedSteps = try reader.read(UInt32.self)
        lap = try reader.readUInt8()
        bikeSpeedCentimetersPerSecond = try reader.read(UInt16.self)
        cadence = try reader.readUInt8()
    }

    public func encoded() -> [UInt8] { wholeBytes }

    package func write(to writer: inout ByteWriter) {
        writer.write(timestamp)
        writer.write(valid)
        writer.write(flag)
        writer.write(latitudeE7)
        writer.write(longitudeE7)
        writer.write(elevationDecimeters)
        writer.write(speedCentimetersPerSecond)
        writer.write(accumulatedDistanceMeters)
        writer.write(accumulatedDurationSeconds)
        writer.write(heartRate)
        writer.write(accumulatedSteps)
        writer.write(lap)
        writer.write(bikeSpeedCentimetersPerSecond)
        writer.write(cadence)
    }
}

/// One lap of an activity, the SDK's lap object — 23 bytes.
public struct GoFITLap: Sendable, Equatable, ByteLayout {
    public static let length = 23

    public var start: UInt32
    public var durationSeconds: UInt32
    public var distanceMeters: UInt32
    public var averageSpeedCentimetersPerSecond: UInt16
    public var averageHeartRate: UInt8
    public var caloriesKcal: UInt16
    public var steps: UInt32
    /// Steps per minute.
    public var averageCadence: UInt8
    public var maximumCadence: UInt8

    public init(
        start: UInt32, durationSeconds: UInt32, distanceMeters: UInt32, averageSpeedCentimetersPerSecond: UInt16,
        averageHeartRate: UInt8, caloriesKcal: UInt16, steps: UInt32, averageCadence: UInt8, maximumCadence: UInt8
    ) {
        self.start = start
        self.durationSeconds = durationSeconds
        self.distanceMeters = distanceMeters
        self.averageSpeedCentimetersPerSecond = averageSpeedCentimetersPerSecond
        self.averageHeartRate = averageHeartRate
        self.caloriesKcal = caloriesKcal
        self.steps = steps
        self.averageCadence = averageCadence
        self.maximumCadence = maximumCadence
    }

    public init(decoding bytes: [UInt8]) throws(GATTCodecError) { try self.init(whole: bytes) }

    package init(reading reader: inout ByteReader) throws(GATTCodecError) {
        start = try reader.read(UInt32.self)
        durationSeconds = try reader.read(UInt32.self)
        distanceMeters = try reader.read(UInt32.self)
        averageSpeedCentimetersPerSecond = try reader.read(UInt16.self)
        averageHeartRate = try reader.readUInt8()
        caloriesKcal = try reader.read(UInt16.self)
        steps = try reader.read(UInt32.self)
        averageCadence = try reader.readUInt8()
        maximumCadence = try reader.readUInt8()
    }

    public func encoded() -> [UInt8] { wholeBytes }

    package func write(to writer: inout ByteWriter) {
        writer.write(start)
        writer.write(durationSeconds)
        writer.write(distanceMeters)
        writer.write(averageSpeedCentimetersPerSecond)
        writer.write(averageHeartRate)
        writer.write(caloriesKcal)
        writer.write(steps)
        writer.write(averageCadence)
        writer.write(maximumCadence)
    }
}

/// One recorded workout: a summary, its GPS track and its laps. On the wire it is `length u16` followed by that
/// many bytes (the summary, then 35-byte points, then 23-byte laps); `encoded()` and `init(decoding:)` include
/// the length, as a history page carries it.
public struct GoFITActivity: Sendable, Equatable, ByteLayout {
    /// The summary after the length: start … lap count.
    public static let summaryLength = 27
    public static let maximumPoints = 1800
    public static let maximumLaps = 100

    public var start: UInt32
    /// Minutes east of UTC where the activity was recorded.
    public var timeZoneOffsetMinutes: Int16
    public var typeID: UInt8
    public var nmeaVersion: UInt8
    public var durationSeconds: UInt32
    public var distanceMeters: UInt32
    public var caloriesKcal: UInt16
    public var steps: UInt32
    public var averageHeartRate: UInt8
    public var maximumHeartRate: UInt8
    /// At most `maximumPoints`; the decoder rejects more, the encoder writes what it is given.
    public var points: [GoFITGPSPoint]
    /// At most `maximumLaps`; the decoder rejects more, the encoder writes what it is given.
    public var laps: [GoFITLap]

    public init(
        start: UInt32, timeZoneOffsetMinutes: Int16, typeID: UInt8, nmeaVersion: UInt8, durationSeconds: UInt32,
        distanceMeters: UInt32, caloriesKcal: UInt16, steps: UInt32, averageHeartRate: UInt8, maximumHeartRate: UInt8,
        points: [GoFITGPSPoint] = [], laps: [GoFITLap] = []
    ) {
        self.start = start
        self.timeZoneOffsetMinutes = timeZoneOffsetMinutes
        self.typeID = typeID
        self.nmeaVersion = nmeaVersion
        self.durationSeconds = durationSeconds
        self.distanceMeters = distanceMeters
        self.caloriesKcal = caloriesKcal
        self.steps = steps
        self.averageHeartRate = averageHeartRate
        self.maximumHeartRate = maximumHeartRate
        self.points = points
        self.laps = laps
    }

    public init(decoding bytes: [UInt8]) throws(GATTCodecError) { try self.init(whole: bytes) }

    /// Reads the length first and the body only within it, so a body that disagrees with its length is an error
    /// here and not a misread of the next record.
    package init(reading reader: inout ByteReader) throws(GATTCodecError) {
        let length = Int(try reader.read(UInt16.self))
        let bodyStart = reader.offset
        var body = ByteReader(Array(try reader.readBytes(length)))
        do throws(GATTCodecError) {
            start = try body.read(UInt32.self)
            timeZoneOffsetMinutes = try body.readInt16()
            typeID = try body.readUInt8()
            nmeaVersion = try body.readUInt8()
            durationSeconds = try body.read(UInt32.self)
            distanceMeters = try body.read(UInt32.self)
            caloriesKcal = try body.read(UInt16.self)
            steps = try body.read(UInt32.self)
            averageHeartRate = try body.readUInt8()
            maximumHeartRate = try body.readUInt8()
            let pointCount = Int(try body.read(UInt16.self))
            guard pointCount <= Self.maximumPoints else { throw .outOfRange(field: "GPS point count", value: pointCount) }
            let lapCount = Int(try body.readUInt8())
            guard lapCount <= Self.maximumLaps else { throw .outOfRange(field: "lap count", value: lapCount) }
            let bodyLength = Self.summaryLength + pointCount * GoFITGPSPoint.length + lapCount * GoFITLap.length
            guard bodyLength == length else {
                throw .truncated(expected: bodyLength, actual: length)
            }
            var points: [GoFITGPSPoint] = []
            points.reserveCapacity(pointCount)
            for _ in 0..<pointCount { points.append(try GoFITGPSPoint(reading: &body)) }
            self.points = points
            var laps: [GoFITLap] = []
            laps.reserveCapacity(lapCount)
            for _ in 0..<lapCount { laps.append(try GoFITLap(reading: &body)) }
            self.laps = laps
        } catch .truncated(let expected, let actual) {
            // Offsets within the body, told as offsets within what the caller handed over.
            throw .truncated(expected: bodyStart + expected, actual: bodyStart + actual)
        }
    }

    public func encoded() -> [UInt8] { wholeBytes }

    /// Traps when the activity cannot be framed at all (more than 65,535 points or 255 laps, a body past 65,535
    /// bytes): a bug of the caller, not of the band.
    package func write(to writer: inout ByteWriter) {
        let length = Self.summaryLength + points.count * GoFITGPSPoint.length + laps.count * GoFITLap.length
        precondition(length <= Int(UInt16.max) && points.count <= Int(UInt16.max) && laps.count <= Int(UInt8.max),
                     "a GoFIT activity of \(points.count) points and \(laps.count) laps cannot be framed")
        writer.write(UInt16(length))
        writer.write(start)
        writer.write(timeZoneOffsetMinutes)
        writer.write(typeID)
        writer.write(nmeaVersion)
        writer.write(durationSeconds)
        writer.write(distanceMeters)
        writer.write(caloriesKcal)
        writer.write(steps)
        writer.write(averageHeartRate)
        writer.write(maximumHeartRate)
        writer.write(UInt16(points.count))
        writer.write(UInt8(laps.count))
        for point in points { point.write(to: &writer) }
        for lap in laps { lap.write(to: &writer) }
    }
}

/// A history record of any kind, as a `HISTORY_PAGE` answer carries it.
public enum GoFITHistoryRecord: Sendable, Equatable, ByteWritable {
    case steps(GoFITStepRecord)
    case sleep(GoFITSleepRecord)
    case heartRate(GoFITHeartRateRecord)
    case spo2(GoFITSpO2Record)
    case activity(GoFITActivity)

    public var kind: GoFITHistoryKind {
        switch self {
        case .steps: .steps
        case .sleep: .sleep
        case .heartRate: .heartRate
        case .spo2: .spo2
        case .activity: .activity
        }
    }

    /// Unix seconds: the record's time, an activity's start.
    public var timestamp: UInt32 {
        switch self {
        case .steps(let record): record.timestamp
        case .sleep(let record): record.timestamp
        case .heartRate(let record): record.timestamp
        case .spo2(let record): record.timestamp
        case .activity(let activity): activity.start
        }
    }

    /// One record of `kind`, an activity with its length prefix.
    public init(decoding bytes: [UInt8], kind: GoFITHistoryKind) throws(GATTCodecError) {
        var reader = ByteReader(bytes)
        try self.init(reading: &reader, kind: kind)
        try reader.expectEnd()
    }

    package init(reading reader: inout ByteReader, kind: GoFITHistoryKind) throws(GATTCodecError) {
        switch kind {
        case .steps: self = .steps(try GoFITStepRecord(reading: &reader))
        case .sleep: self = .sleep(try GoFITSleepRecord(reading: &reader))
        case .heartRate: self = .heartRate(try GoFITHeartRateRecord(reading: &reader))
        case .spo2: self = .spo2(try GoFITSpO2Record(reading: &reader))
        case .activity: self = .activity(try GoFITActivity(reading: &reader))
        }
    }

    public func encoded() -> [UInt8] { wholeBytes }

    package func write(to writer: inout ByteWriter) {
        switch self {
        case .steps(let record): record.write(to: &writer)
        case .sleep(let record): record.write(to: &writer)
        case .heartRate(let record): record.write(to: &writer)
        case .spo2(let record): record.write(to: &writer)
        case .activity(let activity): activity.write(to: &writer)
        }
    }
}
