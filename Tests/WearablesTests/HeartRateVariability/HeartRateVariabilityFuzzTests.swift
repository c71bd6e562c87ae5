import SimulatedWearables
import Testing
import Wearables

/// Input no device should send, and every prefix of input one does: the calculator never traps, its counts never
/// exceed what it was given, and its measures are finite and within their ranges whenever it gives them.
@Suite("Heart-rate variability: arbitrary input")
struct HeartRateVariabilityFuzzTests {
    static func check(_ result: HeartRateVariability, fed: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.intervals >= 0 && result.rejected >= 0 && result.intervals + result.rejected <= fed,
                sourceLocation: sourceLocation)
        guard let measures = result.measures else { return }
        #expect(result.intervals >= 30, sourceLocation: sourceLocation)
        #expect(measures.rmssdMilliseconds.isFinite && measures.rmssdMilliseconds >= 0 && measures.rmssdMilliseconds <= 1700,
                sourceLocation: sourceLocation)
        #expect(measures.sdnnMilliseconds.isFinite && measures.sdnnMilliseconds >= 0 && measures.sdnnMilliseconds <= 1700,
                sourceLocation: sourceLocation)
        #expect((0...100).contains(measures.pnn50Percent), sourceLocation: sourceLocation)
        #expect((30...200).contains(measures.meanHeartRateBPM), sourceLocation: sourceLocation)
    }

    @Test("random intervals (NaN, ±infinity, negative, huge), timings and timestamps (Int64's extremes included)")
    func randomInput() {
        var random = SimulationRandom(seed: 0x4852_56)
        let oddValues: [Double] = [.nan, .infinity, -.infinity, -1, 0, 1e300, -1e300, .ulpOfOne, 299.999, 2000.001]
        let oddTimes: [Int64] = [.min, .max, 0, -1, 1]
        for round in 0..<200 {
            var calculator = HeartRateVariabilityCalculator(rules: .init(windowMilliseconds: Int64(random.next() % 400_000)))
            var time: Int64 = 1_795_298_704_000
            var fed = 0
            for _ in 0..<Int(random.next() % 300) {
                let count = Int(random.next() % 10)
                let intervals = (0..<count).map { _ in
                    random.next() % 8 == 0 ? oddValues[Int(random.next() % UInt64(oddValues.count))] : Double(random.next() % 2500)
                }
                time = random.next() % 50 == 0 ? oddTimes[Int(random.next() % UInt64(oddTimes.count))]
                    : time &+ Int64(random.next() % 3000) &- 500
                let timing: BeatIntervals.Timing = random.next() % 2 == 0 ? .beat : .notification
                calculator.add(count == 1 && random.next() % 2 == 0
                               ? BeatIntervals(milliseconds: intervals[0], timing: timing, timestamp: time)
                               : BeatIntervals(milliseconds: intervals, timing: timing, timestamp: time))
                fed += count
                if random.next() % 20 == 0 { calculator.breakSequence() }
                if random.next() % 10 == 0 { Self.check(calculator.summary(at: time), fed: fed) }
            }
            let now = random.next() % 5 == 0 ? oddTimes[round % oddTimes.count] : time
            Self.check(calculator.summary(at: now), fed: fed)
        }
    }

    @Test("every prefix of a long series: the counts grow one interval at a time and the measures appear once 30 clean intervals cover half the window")
    func everyPrefix() {
        let intervals = Array(RespiratoryRRSeries.intervals.prefix(70))
        for length in 0...intervals.count {
            var calculator = HeartRateVariabilityCalculator()
            let end = HeartRateVariabilityMeasuresTests.feed(Array(intervals.prefix(length)), into: &calculator)
            let result = calculator.summary(at: end)
            Self.check(result, fed: length)
            #expect(result.intervals == length && result.rejected == 0, "the 70 intervals span 56 s: all in the window")
            // The first 38 intervals are the first to reach 30 s (30.49 s).
            #expect((result.measures != nil) == (length >= 38), "\(length) intervals: \(result)")
        }
    }
}
