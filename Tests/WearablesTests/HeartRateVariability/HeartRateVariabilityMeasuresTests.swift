import Testing
import Wearables

/// RMSSD, SDNN, pNN50 and mean HR against values known in closed form and against a published series, through the
/// whole calculator (beats timed as an E4 times them), not just the formulas.
@Suite("Heart-rate variability: measures")
struct HeartRateVariabilityMeasuresTests {
    static let start: Int64 = 1_795_298_704_000

    /// Beat-timed intervals, one sample per beat, from `start`; answers the time of the last beat. A value that is no
    /// interval (negative, not a number) takes no time.
    static func feed(_ intervals: [Double], into calculator: inout HeartRateVariabilityCalculator, from start: Int64 = start) -> Int64 {
        var beat = Double(start)
        for interval in intervals {
            beat += interval.isFinite ? max(0, interval) : 0
            calculator.add(BeatIntervals(milliseconds: interval, timing: .beat, timestamp: Int64(beat.rounded())))
        }
        return Int64(beat.rounded())
    }

    static func summary(of intervals: [Double], windowMilliseconds: Int64 = 60_000) -> HeartRateVariability {
        var calculator = HeartRateVariabilityCalculator(rules: .init(windowMilliseconds: windowMilliseconds))
        let end = feed(intervals, into: &calculator)
        return calculator.summary(at: end)
    }

    @Test("alternating 800/850 ms: RMSSD 50, SDNN 25·√(N/(N−1)) (sample SD; 25 as a population SD), pNN50 0 (50 is not more than 50), mean HR 60000/825")
    func alternatingBy50() throws {
        let count = 60.0
        let intervals = (0..<Int(count)).map { $0 % 2 == 0 ? 800.0 : 850.0 }
        let result = Self.summary(of: intervals)
        let measures = try #require(result.measures)
        #expect(abs(measures.rmssdMilliseconds - 50) < 1e-9)
        #expect(abs(measures.sdnnMilliseconds - 25 * (count / (count - 1)).squareRoot()) < 1e-9)
        #expect(abs(measures.sdnnMilliseconds - 25) < 1, "within 1 ms of the population SD as well")
        #expect(measures.pnn50Percent == 0)
        #expect(abs(measures.meanHeartRateBPM - 60_000 / 825) < 1e-9)
        #expect(result.intervals == 60 && result.rejected == 0 && result.windowSeconds == 60)
    }

    @Test("alternating 800/860 ms: RMSSD 60, SDNN 30·√(N/(N−1)), pNN50 100")
    func alternatingBy60() throws {
        let intervals = (0..<50).map { $0 % 2 == 0 ? 800.0 : 860.0 }
        let measures = try #require(Self.summary(of: intervals).measures)
        #expect(abs(measures.rmssdMilliseconds - 60) < 1e-9)
        #expect(abs(measures.sdnnMilliseconds - 30 * (50.0 / 49).squareRoot()) < 1e-9)
        #expect(measures.pnn50Percent == 100)
    }

    @Test("a ramp 700, 702, …, 818 ms: RMSSD 2, SDNN 2·√(N(N+1)/12) = 2·√305, pNN50 0")
    func ramp() throws {
        let intervals = (0..<60).map { 700.0 + 2 * Double($0) }
        let measures = try #require(Self.summary(of: intervals).measures)
        #expect(abs(measures.rmssdMilliseconds - 2) < 1e-9)
        #expect(abs(measures.sdnnMilliseconds - 2 * 305.0.squareRoot()) < 1e-9)
        #expect(measures.pnn50Percent == 0)
        #expect(abs(measures.meanHeartRateBPM - 60_000 / 759) < 1e-9)
    }

    @Test("a constant rhythm has no variability: RMSSD 0, SDNN 0")
    func constant() throws {
        let measures = try #require(Self.summary(of: Array(repeating: 1000, count: 45)).measures)
        #expect(measures.rmssdMilliseconds == 0 && measures.sdnnMilliseconds == 0 && measures.pnn50Percent == 0)
        #expect(measures.meanHeartRateBPM == 60)
    }

    @Test("respiratory sinus arrhythmia, 1001 intervals: RMSSD √2·60·sin(π/5), SDNN 60/√2, pNN50 60 %, mean NN 800, within 1 ms")
    func respiratorySeries() throws {
        let intervals = RespiratoryRRSeries.intervals
        // 800.8 s of beats: a window that holds all of them.
        let result = Self.summary(of: intervals, windowMilliseconds: 810_000)
        #expect(result.intervals == 1001 && result.rejected == 0, "no interval changes by 20 % in this series")
        let measures = try #require(result.measures)
        #expect(abs(measures.rmssdMilliseconds - RespiratoryRRSeries.rmssd) < 1e-6)
        #expect(abs(measures.sdnnMilliseconds - RespiratoryRRSeries.sdnn) < 1e-6)
        #expect(abs(measures.pnn50Percent - RespiratoryRRSeries.pnn50) < 1e-9)
        #expect(abs(60_000 / measures.meanHeartRateBPM - RespiratoryRRSeries.meanNN) < 1e-9)
        // The formulas alone agree with the calculator.
        #expect(HeartRateVariability.Measures(unbrokenRun: intervals) == measures)
    }

    @Test("a 60 s window of the respiratory series: the measures of exactly the intervals whose beat fell in it")
    func respiratorySeriesWindow() throws {
        let intervals = RespiratoryRRSeries.intervals
        var calculator = HeartRateVariabilityCalculator(rules: .init(windowMilliseconds: 60_000))
        let end = Self.feed(intervals, into: &calculator)
        let result = calculator.summary(at: end)
        // Beats later than end − 60 s, counted from the end.
        var inWindow: [Double] = []
        var elapsed = 0.0
        for interval in intervals.reversed() {
            guard elapsed < 60_000 else { break }
            inWindow.insert(interval, at: 0)
            elapsed += interval
        }
        #expect(result.intervals == inWindow.count)
        #expect(result.measures == HeartRateVariability.Measures(unbrokenRun: inWindow))
    }
}
