import Wearables

/// A plausible stretch of a Link wearer's days as the Link stores them: one 60-second epoch a minute
/// (`ActiGraphEpochRecord`). Pure and deterministic: each epoch depends only on the seed and its minute, so two
/// windows over the same hours agree where they overlap.
///
/// The wearer's day, in UTC (the Link stamps epochs with Unix time and knows no time zone), each time drawn
/// afresh per day:
/// - **asleep** from a bedtime between 22:20 and 23:20 to a wake-up between 06:20 and 07:10: counts 0–50 on each
///   axis, no steps, heart rate 50–60, worn;
/// - **walking** in the morning (25–40 min, starting 30–60 min after waking) and the evening (30–50 min from
///   17:30–18:15): counts 1,500–5,000 (the vertical y axis highest), 90–125 steps a minute, heart rate 95–125,
///   rising over the first minutes;
/// - **not worn** for 40–70 min, 60–90 min after the evening walk (a shower, charging): all zero, heart rate 0
///   ("none"), wear 0;
/// - **sedentary** the rest of the day: counts 0–600, now and then a few steps, heart rate 65–85.
///
/// The window is `end − hours × 1 h ..< end` with `end` rounded down to the minute; the last epoch starts at
/// `end − 60`. Not modeled: naps, exercise harder than walking, the Link's own storage limits.
public struct ActiGraphSimulatedEpochs: Sendable, Equatable {
    public static let epochSeconds: UInt32 = 60

    /// What the wearer did in one minute.
    public enum Activity: Sendable, Equatable {
        case asleep
        case walking
        case sedentary
        case notWorn
    }

    public let start: UInt32
    public let end: UInt32
    /// Oldest first, one per minute of the window.
    public let records: [ActiGraphEpochRecord]

    public init(hours: Int = 24, end: UInt32, seed: UInt64) {
        let end = end - end % Self.epochSeconds
        let start = end - min(end, UInt32(max(0, hours)) * 3600)
        self.start = start
        self.end = end
        records = stride(from: start, to: end, by: Int(Self.epochSeconds)).map { Self.record(at: $0, seed: seed) }
    }

    // MARK: The day

    /// The day's plan in minutes since UTC midnight.
    struct DayPlan: Equatable {
        let wake: Int
        let bedtime: Int
        let morningWalk: Range<Int>
        let eveningWalk: Range<Int>
        let notWorn: Range<Int>

        init(day: Int64, seed: UInt64) {
            var random = ActiGraphSimulatedEpochs.random(seed, salt: 1, day)
            wake = 6 * 60 + 20 + Int.random(in: 0...50, using: &random)
            bedtime = 22 * 60 + 20 + Int.random(in: 0...60, using: &random)
            let morningStart = wake + Int.random(in: 30...60, using: &random)
            morningWalk = morningStart..<(morningStart + Int.random(in: 25...40, using: &random))
            let eveningStart = 17 * 60 + 30 + Int.random(in: 0...45, using: &random)
            eveningWalk = eveningStart..<(eveningStart + Int.random(in: 30...50, using: &random))
            let offStart = eveningWalk.upperBound + Int.random(in: 60...90, using: &random)
            notWorn = offStart..<(offStart + Int.random(in: 40...70, using: &random))
        }

        func activity(atMinute minute: Int) -> Activity {
            if minute < wake || minute >= bedtime { return .asleep }
            if notWorn.contains(minute) { return .notWorn }
            if morningWalk.contains(minute) || eveningWalk.contains(minute) { return .walking }
            return .sedentary
        }

        /// Minutes since the walk around `minute` began (0 in its first minute).
        func minutesWalked(atMinute minute: Int) -> Int {
            minute - (morningWalk.contains(minute) ? morningWalk.lowerBound : eveningWalk.lowerBound)
        }
    }

    public static func activity(at time: UInt32, seed: UInt64) -> Activity {
        let (day, minute) = dayAndMinute(of: time)
        return DayPlan(day: day, seed: seed).activity(atMinute: minute)
    }

    /// The epoch of the minute starting at `time` (a multiple of 60).
    static func record(at time: UInt32, seed: UInt64) -> ActiGraphEpochRecord {
        let (day, minute) = dayAndMinute(of: time)
        let plan = DayPlan(day: day, seed: seed)
        var random = random(seed, salt: 2, Int64(time))
        func counts(_ range: ClosedRange<UInt16>) -> UInt16 { UInt16.random(in: range, using: &random) }
        switch plan.activity(atMinute: minute) {
        case .asleep:
            return ActiGraphEpochRecord(timestamp: time, xCounts: counts(0...50), yCounts: counts(0...50),
                                        zCounts: counts(0...50), steps: 0,
                                        heartRate: UInt8.random(in: 50...60, using: &random), isWorn: true)
        case .walking:
            let warmUp = min(plan.minutesWalked(atMinute: minute), 5) * 4
            let pulse = 98 + warmUp + Int.random(in: -3...5, using: &random)
            return ActiGraphEpochRecord(timestamp: time, xCounts: counts(1500...4000), yCounts: counts(2500...5000),
                                        zCounts: counts(1500...3500), steps: counts(90...125),
                                        heartRate: UInt8(min(max(pulse, 95), 125)), isWorn: true)
        case .sedentary:
            let steps: UInt16 = Int.random(in: 0..<10, using: &random) < 3 ? counts(1...20) : 0
            return ActiGraphEpochRecord(timestamp: time, xCounts: counts(0...600), yCounts: counts(0...600),
                                        zCounts: counts(0...600), steps: steps,
                                        heartRate: UInt8.random(in: 65...85, using: &random), isWorn: true)
        case .notWorn:
            return ActiGraphEpochRecord(timestamp: time, xCounts: 0, yCounts: 0, zCounts: 0, steps: 0, heartRate: 0,
                                        isWorn: false)
        }
    }

    static func dayAndMinute(of time: UInt32) -> (day: Int64, minute: Int) {
        (Int64(time / 86_400), Int(time % 86_400) / 60)
    }

    /// A generator for one day or one minute, so each draws from its own stream.
    static func random(_ seed: UInt64, salt: UInt64, _ index: Int64) -> SimulationRandom {
        var mixer = SimulationRandom(seed: seed ^ (salt &* 0xA076_1D64_78BD_642F))
        return SimulationRandom(seed: mixer.next() ^ UInt64(bitPattern: index) &* 0xE703_7ED1_A0B4_28DB)
    }
}
