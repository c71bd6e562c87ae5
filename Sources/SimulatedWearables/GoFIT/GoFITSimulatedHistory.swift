import Foundation
import Wearables

/// A plausible stretch of a wearer's life as a GoFIT band stores it, shaped like the samples of seed 001 (steps
/// 129/467/27 in 20-minute buckets, sleep scores from 5 down to 1 as the wearer falls asleep at 23:00 in UTC+8,
/// pulses in the 80s by day). Pure and deterministic: the same days, end, seed and time zone give the same records.
///
/// - Steps: one record per 20-minute bucket, 0 while asleep; walking peaks on the way to and from work and at
///   lunch; distance ≈ steps × 0.74–0.80 m, calories ≈ steps / 20 kcal; a run's steps and distance are added to
///   the buckets it covers.
/// - Sleep: one score per 10 minutes each night, from a bedtime between 22:30 and 23:50 to a wake-up between 06:10
///   and 07:30 (local time); light (5) while falling asleep, then 90-minute cycles that are deeper early in the night.
/// - Heart rate: one reading every 10 minutes; resting 55–70 bpm asleep, 70–110 awake depending on the walking of
///   that bucket, the workout's own rate during a workout.
/// - SpO2: four spot readings a day (around 02:40, 08:50, 14:30 and 20:10 local time), 94–99 %.
/// - Workouts: a 30-minute run at 18:30 on the last day that fits and a 45-minute ride at 09:00 up to three days
///   earlier (`GoFITSimulatedWorkout`), each kept only when it lies wholly in the window — so a week has two, a
///   day or two may have one.
///
/// The window is `end − days × 24 h ..< end`, `end` rounded down to 20 minutes. Each fixed-size record's values
/// depend only on the seed and its time, so two windows over the same hours agree where they overlap.
public struct GoFITSimulatedHistory: Sendable, Equatable {
    public static let stepBucketSeconds: UInt32 = 1200
    public static let sleepPeriodSeconds: UInt32 = 600
    public static let heartRateIntervalSeconds: UInt32 = 600
    /// UTC+8, the time zone of seed 001's samples (GOLiFE is a Taiwanese brand).
    public static let defaultTimeZoneOffsetMinutes: Int16 = 480
    public static let runSeconds = 30 * 60
    public static let rideSeconds = 45 * 60

    public let start: UInt32
    public let end: UInt32
    public let steps: [GoFITStepRecord]
    public let sleep: [GoFITSleepRecord]
    public let heartRate: [GoFITHeartRateRecord]
    public let spo2: [GoFITSpO2Record]
    public let activities: [GoFITActivity]

    /// `days` of history before `end` (Unix seconds); `timeZoneOffsetMinutes` is where the wearer lives, which
    /// decides day and night.
    public init(days: Int = 7, end: UInt32, seed: UInt64,
                timeZoneOffsetMinutes: Int16 = defaultTimeZoneOffsetMinutes) {
        let end = end - end % Self.stepBucketSeconds
        let start = end - min(end, UInt32(max(0, days)) * 86_400)
        self.start = start
        self.end = end
        let clock = LocalClock(offsetSeconds: Int64(timeZoneOffsetMinutes) * 60)
        let nights = Self.nights(from: start, to: end, clock: clock, seed: seed)
        func asleep(_ time: UInt32) -> Bool { nights.contains { $0.contains(time) } }

        activities = Self.workouts(from: start, to: end, clock: clock, days: days, seed: seed,
                                   timeZoneOffsetMinutes: timeZoneOffsetMinutes)
        let workoutPoints = activities.map(\.points)

        var steps: [GoFITStepRecord] = []
        for bucket in stride(from: start, to: end, by: Int(Self.stepBucketSeconds)) {
            steps.append(Self.stepBucket(at: bucket, asleep: asleep(bucket + Self.stepBucketSeconds / 2),
                                         clock: clock, workouts: workoutPoints, seed: seed))
        }
        self.steps = steps

        sleep = nights.flatMap { night in
            stride(from: night.bedtime, to: night.wake, by: Int(Self.sleepPeriodSeconds))
                .filter { (start..<end).contains($0) }
                .map { GoFITSleepRecord(timestamp: $0, score: Self.sleepScore(at: $0, in: night, seed: seed)) }
        }

        var heartRate: [GoFITHeartRateRecord] = []
        for time in stride(from: start, to: end, by: Int(Self.heartRateIntervalSeconds)) {
            let bucket = steps[Int((time - start) / Self.stepBucketSeconds)]
            heartRate.append(GoFITHeartRateRecord(
                timestamp: time, bpm: Self.pulse(at: time, asleep: asleep(time), walkingSteps: bucket.steps,
                                                 workouts: workoutPoints, seed: seed)))
        }
        self.heartRate = heartRate

        var spo2: [GoFITSpO2Record] = []
        for day in clock.day(of: start)...clock.day(of: end) {
            for (index, minute) in [160, 530, 870, 1210].enumerated() {
                var random = Self.random(seed, salt: 4, Int64(day) * 4 + Int64(index))
                let jitter = Int64.random(in: 0..<30, using: &random) * 60
                let time = clock.utc(day: day, secondOfDay: Int64(minute) * 60 + jitter)
                guard let time = UInt32(exactly: time), (start..<end).contains(time) else { continue }
                let range: ClosedRange<UInt8> = asleep(time) ? 94...97 : 95...99
                spo2.append(GoFITSpO2Record(timestamp: time, percent: UInt8.random(in: range, using: &random)))
            }
        }
        self.spo2 = spo2
    }

    /// Every record, kind by kind, each kind oldest first.
    public var records: [GoFITHistoryRecord] {
        steps.map(GoFITHistoryRecord.steps) + sleep.map(GoFITHistoryRecord.sleep)
            + heartRate.map(GoFITHistoryRecord.heartRate) + spo2.map(GoFITHistoryRecord.spo2)
            + activities.map(GoFITHistoryRecord.activity)
    }

    // MARK: Sleep

    struct Night: Equatable {
        let bedtime: UInt32
        let wake: UInt32

        func contains(_ time: UInt32) -> Bool { (bedtime..<wake).contains(time) }
    }

    /// The nights that touch the window: from the evening before its first day to the evening of its last.
    static func nights(from start: UInt32, to end: UInt32, clock: LocalClock, seed: UInt64) -> [Night] {
        (clock.day(of: start) - 1...clock.day(of: end)).compactMap { day in
            var random = random(seed, salt: 1, day)
            let bedtime = clock.utc(day: day, secondOfDay: (22 * 60 + 30 + Int64.random(in: 0...8, using: &random) * 10) * 60)
            let wake = clock.utc(day: day + 1, secondOfDay: (6 * 60 + 10 + Int64.random(in: 0...8, using: &random) * 10) * 60)
            guard let bed = UInt32(exactly: bedtime), let up = UInt32(exactly: wake) else { return nil }
            return Night(bedtime: bed, wake: up)
        }
    }

    /// 5 while falling asleep, then 90-minute cycles (deepest in the middle of each), deeper early in the night.
    static func sleepScore(at time: UInt32, in night: Night, seed: UInt64) -> UInt8 {
        let minutes = Double(time - night.bedtime) / 60
        guard minutes >= 10 else { return 5 }
        let progress = minutes / (Double(night.wake - night.bedtime) / 60)
        let cycle = sin(Double.pi * (minutes - 10).truncatingRemainder(dividingBy: 90) / 90)
        let depth = cycle * (1 - 0.65 * progress)
        var random = random(seed, salt: 2, Int64(time))
        let score = 5 - 5 * depth + Double.random(in: -0.8...0.8, using: &random)
        return UInt8(min(5, max(0, score.rounded())))
    }

    // MARK: Steps and heart rate

    /// Steps a wearer typically walks in the 20 minutes starting at local `hour`.
    static func typicalWalking(hour: Double) -> Double {
        switch hour {
        case ..<6.5: 10
        case ..<7.5: 150
        case ..<9: 700
        case ..<12: 150
        case ..<13.5: 450
        case ..<17.5: 180
        case ..<19.5: 650
        case ..<22: 250
        default: 40
        }
    }

    static func stepBucket(at time: UInt32, asleep: Bool, clock: LocalClock, workouts: [[GoFITGPSPoint]],
                           seed: UInt64) -> GoFITStepRecord {
        let end = time + stepBucketSeconds
        var random = random(seed, salt: 3, Int64(time))
        let busy = workouts.compactMap { points in Self.progress(of: points, from: time, to: end) }
        let workoutSeconds = busy.reduce(0) { $0 + $1.seconds }
        var walking = 0.0
        if !asleep {
            let sitting = Double.random(in: 0..<1, using: &random) < 0.15
            walking = sitting ? Double.random(in: 0...20, using: &random)
                : typicalWalking(hour: clock.hour(of: time)) * Double.random(in: 0.3...1.5, using: &random)
            walking *= 1 - Double(workoutSeconds) / Double(stepBucketSeconds)
        }
        let strideLength = Double.random(in: 0.74...0.80, using: &random)
        let stepsWalked = walking.rounded()
        let workoutSteps = busy.reduce(0) { $0 + $1.steps }
        let workoutMeters = busy.filter { $0.steps > 0 }.reduce(0) { $0 + $1.meters }
        let steps = stepsWalked + workoutSteps
        return GoFITStepRecord(timestamp: time, steps: UInt16(clamping: Int(steps)),
                               distanceMeters: UInt16(clamping: Int((stepsWalked * strideLength + workoutMeters).rounded())),
                               caloriesKcal: UInt16(clamping: Int((steps / 20).rounded())))
    }

    /// What a workout added between `start` and `end`: seconds, steps and metres; nil when it does not overlap.
    static func progress(of points: [GoFITGPSPoint], from start: UInt32, to end: UInt32)
        -> (seconds: UInt32, steps: Double, meters: Double)?
    {
        guard let first = points.first, let last = points.last, first.timestamp < end, last.timestamp >= start else {
            return nil
        }
        let before = points.last { $0.timestamp < start } ?? first
        let within = points.last { $0.timestamp < end } ?? first
        let seconds = max(0, within.timestamp - max(before.timestamp, first.timestamp))
        return (seconds, Double(within.accumulatedSteps - before.accumulatedSteps),
                Double(within.accumulatedDistanceMeters - before.accumulatedDistanceMeters))
    }

    static func pulse(at time: UInt32, asleep: Bool, walkingSteps: UInt16, workouts: [[GoFITGPSPoint]],
                      seed: UInt64) -> UInt8 {
        for points in workouts {
            guard let first = points.first, let last = points.last, (first.timestamp...last.timestamp).contains(time) else { continue }
            if let point = points.last(where: { $0.timestamp <= time }) { return point.heartRate }
        }
        var random = random(seed, salt: 5, Int64(time))
        let bpm = asleep ? Double.random(in: 55...70, using: &random)
            : 72 + min(30, Double(walkingSteps) / 25) + Double.random(in: -2...8, using: &random)
        return UInt8(min(110, max(asleep ? 55 : 70, bpm.rounded())))
    }

    // MARK: Workouts

    static func workouts(from start: UInt32, to end: UInt32, clock: LocalClock, days: Int, seed: UInt64,
                         timeZoneOffsetMinutes: Int16) -> [GoFITActivity] {
        guard end > start else { return [] }
        var random = random(seed, salt: 6, 0)
        var runDay = clock.day(of: end - 1)
        func runStart(_ day: Int64) -> Int64 { clock.utc(day: day, secondOfDay: (18 * 60 + 30) * 60) }
        if runStart(runDay) + Int64(runSeconds) >= Int64(end) { runDay -= 1 }
        let rideDay = runDay - Int64(min(3, max(1, days - 1)))
        let planned: [(GoFITSimulatedSport, Int64, Int)] = [
            (.ride, clock.utc(day: rideDay, secondOfDay: 9 * 3600), rideSeconds),
            (.run, runStart(runDay), runSeconds),
        ]
        let seeds = planned.map { _ in random.split() }
        return zip(planned, seeds).compactMap { plan, seeded in
            let (sport, time, duration) = plan
            var workoutRandom = seeded
            guard let begin = UInt32(exactly: time), begin >= start, time + Int64(duration) < Int64(end) else { return nil }
            return GoFITSimulatedWorkout.activity(sport, start: begin, durationSeconds: duration,
                                                  timeZoneOffsetMinutes: timeZoneOffsetMinutes, random: &workoutRandom)
        }
    }

    // MARK: Helpers

    /// A generator for one record of one kind (`salt`), so each value depends only on the seed and its time.
    static func random(_ seed: UInt64, salt: UInt64, _ index: Int64) -> SimulationRandom {
        var mixer = SimulationRandom(seed: seed ^ (salt &* 0xA076_1D64_78BD_642F))
        _ = mixer.next()
        return SimulationRandom(seed: mixer.next() ^ UInt64(bitPattern: index) &* 0xE703_7ED1_A0B4_28DB)
    }

    /// Local days and hours of a fixed UTC offset (no daylight saving, as in Taiwan).
    struct LocalClock {
        let offsetSeconds: Int64

        /// Days since 1970-01-01 in local time.
        func day(of time: UInt32) -> Int64 { (Int64(time) + offsetSeconds).floorDivided(by: 86_400) }

        func hour(of time: UInt32) -> Double {
            Double((Int64(time) + offsetSeconds).floorModulo(86_400)) / 3600
        }

        func utc(day: Int64, secondOfDay: Int64) -> Int64 { day * 86_400 + secondOfDay - offsetSeconds }
    }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return self % divisor < 0 ? quotient - 1 : quotient
    }

    fileprivate func floorModulo(_ divisor: Int64) -> Int64 {
        let remainder = self % divisor
        return remainder < 0 ? remainder + divisor : remainder
    }
}
