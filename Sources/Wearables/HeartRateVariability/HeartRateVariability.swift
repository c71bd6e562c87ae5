/// Time-domain heart-rate variability of one window of beats: what `sensor/hrv` carries.
///
/// The measures are those of the Task Force of the European Society of Cardiology and the North American Society
/// of Pacing and Electrophysiology, "Heart rate variability: standards of measurement, physiological
/// interpretation and clinical use", Circulation 93:1043–1065 (1996), computed over the clean (NN) intervals only.
/// They come all together or not at all: `measures` is nil when the window holds too few clean intervals
/// (`HeartRateVariabilityCalculator.Rules`), and the counts then say why.
public struct HeartRateVariability: Sendable, Equatable {
    /// RMSSD, SDNN, pNN50 and mean heart rate; see `init?(intervals:differences:)` for each formula.
    public struct Measures: Sendable, Equatable {
        /// Root mean square of the successive differences between adjacent clean intervals, ms.
        public var rmssdMilliseconds: Double
        /// Standard deviation of the clean intervals, ms, with N − 1 in the denominator (the sample standard
        /// deviation, as Kubios and hrv-analysis compute it).
        public var sdnnMilliseconds: Double
        /// Percentage of successive differences larger than 50 ms.
        public var pnn50Percent: Double
        /// 60 000 / the mean clean interval: the beats the window's clean intervals hold, per minute.
        public var meanHeartRateBPM: Double

        public init(rmssdMilliseconds: Double, sdnnMilliseconds: Double, pnn50Percent: Double, meanHeartRateBPM: Double) {
            self.rmssdMilliseconds = rmssdMilliseconds
            self.sdnnMilliseconds = sdnnMilliseconds
            self.pnn50Percent = pnn50Percent
            self.meanHeartRateBPM = meanHeartRateBPM
        }

        /// The measures of clean intervals (ms) and of the successive differences between those of them that are
        /// adjacent in the beat sequence (ms). Nil without two intervals and one difference.
        ///
        /// - RMSSD = √(Σ d² / D) over the D differences (the Task Force's "square root of the mean of the sum of
        ///   the squares of differences between adjacent NN intervals").
        /// - SDNN = √(Σ (x − x̄)² / (N − 1)) over the N intervals.
        /// - pNN50 = 100 × (differences with |d| > 50 ms) / D. The Task Force divides by the number of intervals;
        ///   with gaps in a window, not every interval has a predecessor, so the differences are the honest
        ///   denominator (for an unbroken run they differ by one: N − 1 against N).
        /// - mean HR = 60 000 / x̄, not the mean of the instantaneous rates 60 000 / x (which weights short
        ///   intervals more and reads higher).
        public init?(intervals: some Collection<Double>, differences: some Collection<Double>) {
            guard intervals.count >= 2, !differences.isEmpty else { return nil }
            let count = Double(intervals.count)
            let mean = intervals.reduce(0, +) / count
            let squaredDeviations = intervals.reduce(0) { $0 + ($1 - mean) * ($1 - mean) }
            var squaredDifferences = 0.0
            var over50 = 0
            for difference in differences {
                squaredDifferences += difference * difference
                if abs(difference) > 50 { over50 += 1 }
            }
            self.init(rmssdMilliseconds: (squaredDifferences / Double(differences.count)).squareRoot(),
                      sdnnMilliseconds: (squaredDeviations / (count - 1)).squareRoot(),
                      pnn50Percent: 100 * Double(over50) / Double(differences.count),
                      meanHeartRateBPM: 60_000 / mean)
        }

        /// The measures of one unbroken run of clean intervals: every neighbouring pair is a successive difference.
        public init?(unbrokenRun intervals: [Double]) {
            self.init(intervals: intervals, differences: zip(intervals.dropFirst(), intervals).map { $0 - $1 })
        }
    }

    /// Nil when too few clean intervals remain in the window.
    public var measures: Measures?
    /// Clean intervals in the window: those the measures are computed from.
    public var intervals: Int
    /// Intervals in the window the artifact rule refused.
    public var rejected: Int
    /// The window's length, seconds.
    public var windowSeconds: Int

    public init(measures: Measures?, intervals: Int, rejected: Int, windowSeconds: Int) {
        self.measures = measures
        self.intervals = intervals
        self.rejected = rejected
        self.windowSeconds = windowSeconds
    }
}
