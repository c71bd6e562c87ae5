import Wearables

/// One recording in a simulated H10's memory: heart rate (one value per interval) or RR intervals (one per beat)
/// from its own simulated heart, from the moment it started until it stopped.
///
/// Pure and lazy: nothing ticks while it records. Whoever asks (status, stop, list, fetch) says what time it is on
/// the device's clock, and the samples up to then are taken at once, in chunks, so a recording an hour long costs
/// an hour of beats once rather than a timer for an hour. The heart is seeded, so the same seed and the same
/// times give the same file.
struct PolarH10Recording: Sendable {
    let identifier: String
    let sampleType: H10RecordingSampleType
    let interval: H10RecordingInterval
    /// Device seconds when it started, and when it stopped (nil while it runs).
    let start: Double
    private(set) var stop: Double?
    private(set) var heartRates: [UInt32] = []
    private(set) var rrIntervals: [UInt32] = []

    private var heart: PolarHeartSignal
    /// Seconds into the recording up to which beats were looked at.
    private var takenThrough = 0.0

    /// The public sources do not give the H10's memory size; a recording stops growing at this many samples
    /// (a day of heart rate at 1 s), as a full memory would end it. Modeled.
    static let maximumSamples = 86_400
    /// Beats are generated this many seconds at a time, so a long stretch never holds more than a minute of them.
    private static let chunkSeconds = 60.0

    init(identifier: String, sampleType: H10RecordingSampleType, interval: H10RecordingInterval, start: Double,
         meanBPM: Double, variation: Double, seed: UInt64) {
        self.identifier = identifier
        self.sampleType = sampleType
        self.interval = interval
        self.start = start
        heart = PolarHeartSignal(meanBPM: meanBPM, variation: variation, seed: seed)
    }

    var isRecording: Bool { stop == nil }
    var sampleCount: Int { sampleType == .heartRate ? heartRates.count : rrIntervals.count }
    private var isFull: Bool { sampleCount >= Self.maximumSamples }

    /// Takes the samples up to `time` (device seconds), and stops there.
    mutating func finish(at time: Double) {
        record(through: time)
        if stop == nil { stop = max(time, start) }
    }

    /// Takes every sample due by `time` (device seconds; capped at the stop).
    mutating func record(through time: Double) {
        let end = min(time, stop ?? time) - start
        let step = Double(interval.rawValue)
        while takenThrough < end && !isFull {
            let chunkEnd = min(end, takenThrough + Self.chunkSeconds)
            heart.extend(through: chunkEnd, keepingFrom: takenThrough - step)
            switch sampleType {
            case .rrInterval:
                for beat in heart.beats(after: takenThrough, through: chunkEnd) where !isFull {
                    rrIntervals.append(UInt32((beat.interval * 1000).rounded()))
                }
            case .heartRate:
                // One value per whole interval: the rate of the beats that ended in it (the mean rate when none did).
                while Double(heartRates.count + 1) * step <= chunkEnd && !isFull {
                    let from = Double(heartRates.count) * step
                    let intervals = heart.beats(after: from, through: from + step).map(\.interval)
                    let mean = intervals.isEmpty ? heart.meanInterval : intervals.reduce(0, +) / Double(intervals.count)
                    heartRates.append(UInt32((60 / mean).rounded()))
                }
            }
            takenThrough = chunkEnd
        }
    }

    /// `SAMPLES.BPB` as the SDK reads it: the interval and the heart rates, or the RR intervals.
    var file: H10ExerciseSamples {
        switch sampleType {
        case .heartRate: H10ExerciseSamples(intervalMilliseconds: UInt64(interval.rawValue) * 1000, heartRates: heartRates)
        case .rrInterval: H10ExerciseSamples(intervalMilliseconds: UInt64(interval.rawValue) * 1000, rrIntervalsMilliseconds: rrIntervals)
        }
    }
}
