import Testing
import Wearables

/// The artifact rule, the window, gaps and the minimum of clean intervals (docs/hrv.md), each with a series whose
/// answer is known.
@Suite("Heart-rate variability: artifacts, window and gaps")
struct HeartRateVariabilityCalculatorTests {
    static let start = HeartRateVariabilityMeasuresTests.start

    static func calculator(window: Int64 = 60_000) -> HeartRateVariabilityCalculator {
        HeartRateVariabilityCalculator(rules: .init(windowMilliseconds: window))
    }

    /// 800/850 alternating: RMSSD 50 whatever the length.
    static func alternating(_ count: Int) -> [Double] { (0..<count).map { $0 % 2 == 0 ? 800 : 850 } }

    @Test("intervals outside 300–2000 ms, and non-numbers, are rejected and counted; the measures come from the rest")
    func outOfRange() throws {
        var calculator = Self.calculator()
        var series = Self.alternating(60)
        series.insert(250, at: 10)
        series.insert(2100, at: 30)
        series.insert(-5, at: 40)
        series.insert(.nan, at: 50)
        let end = HeartRateVariabilityMeasuresTests.feed(series, into: &calculator)
        let result = calculator.summary(at: end)
        #expect(result.rejected == 4 && result.intervals == 60)
        let measures = try #require(result.measures)
        // Only neighbours count: the 800 → 850 pairs around each rejected interval are lost, all of them |50|.
        #expect(abs(measures.rmssdMilliseconds - 50) < 1e-9)
    }

    @Test("Malik's 20 %: an ectopic beat and its compensatory pause are both rejected, the next normal beat is accepted and no difference spans them")
    func ectopicBeat() throws {
        var calculator = Self.calculator()
        var series = Self.alternating(60)
        // 800 850 800 | 480 (premature, −40 %) 1170 (pause, +46 % of 800) | 850 …
        series.insert(contentsOf: [480, 1170], at: 21)
        let end = HeartRateVariabilityMeasuresTests.feed(series, into: &calculator)
        let result = calculator.summary(at: end)
        #expect(result.rejected == 2 && result.intervals == 60)
        #expect(abs(try #require(result.measures).rmssdMilliseconds - 50) < 1e-9,
                "had either been accepted, a difference of hundreds of ms would show")
    }

    @Test("exactly 20 % is accepted, just over is rejected (compared with the previous accepted interval)")
    func boundary() {
        var calculator = Self.calculator()
        // 1200 is 20 % above 1000; 1000 is 17 % below 1200; 1200.5 is 20.05 % above 1000.
        let end = HeartRateVariabilityMeasuresTests.feed([1000, 1200, 1000, 1200.5], into: &calculator)
        let result = calculator.summary(at: end)
        #expect(result.intervals == 3 && result.rejected == 1)
    }

    @Test("a first interval that was an artifact does not lock the rhythm out: three consistent rejections make a new reference")
    func followsANewRhythm() throws {
        var calculator = Self.calculator()
        // A missed beat first (1650 = 800 + 850), then the real rhythm, 20 % and more away from it.
        let series = [1650] + Self.alternating(70)
        let end = HeartRateVariabilityMeasuresTests.feed(series, into: &calculator)
        let result = calculator.summary(at: end)
        // 1650 accepted (nothing to compare with), 800 and 850 rejected, the third accepted, the rest follow it.
        #expect(result.rejected == 2)
        #expect(result.intervals == 69, "the window still holds the 1650 ms interval: \(result)")
        // The 1650 → 800 step is no difference: the two between were rejected.
        #expect(abs(try #require(result.measures).rmssdMilliseconds - 50) < 1e-9)
    }

    @Test("inconsistent rejections do not make a reference: noise stays rejected")
    func noiseStaysRejected() {
        var calculator = Self.calculator()
        let series = Self.alternating(40) + [400, 1500, 420, 1600, 410, 1700] + Self.alternating(10)
        let end = HeartRateVariabilityMeasuresTests.feed(series, into: &calculator)
        let result = calculator.summary(at: end)
        #expect(result.rejected == 6 && result.intervals == 50)
    }

    @Test("the window slides: intervals whose beat is older than now − window leave it, and the counts follow")
    func windowSlides() throws {
        var calculator = Self.calculator(window: 30_000)
        // 60 s of 1000 ms beats: the first beat at start + 1 s.
        let end = HeartRateVariabilityMeasuresTests.feed(Array(repeating: 1000, count: 60), into: &calculator)
        #expect(calculator.summary(at: end).intervals == 30, "beats at end − 29 s … end")
        #expect(calculator.summary(at: end + 10_000).intervals == 20)
        #expect(calculator.summary(at: end + 10_000).measures == nil, "20 intervals are too few")
        #expect(calculator.summary(at: end + 30_000).intervals == 0)
        #expect(calculator.isEmpty)
        // New beats after the window emptied: counted from scratch.
        _ = HeartRateVariabilityMeasuresTests.feed(Array(repeating: 1000, count: 5), into: &calculator, from: end + 40_000)
        #expect(calculator.summary(at: end + 45_000).intervals == 5)
    }

    @Test("too few: under 30 clean intervals, under 20 differences or under half the window covered, no measures; the counts remain",
          arguments: [
            (Array(repeating: 1000.0, count: 29), 60_000 as Int64, false),
            (Array(repeating: 1000.0, count: 30), 60_000 as Int64, true),
            (Array(repeating: 900.0, count: 33), 60_000 as Int64, false), // 29.7 s of 60
            (Array(repeating: 900.0, count: 34), 60_000 as Int64, true), // 30.6 s
            (Array(repeating: 400.0, count: 60), 60_000 as Int64, false), // 60 beats but 24 s
          ] as [([Double], Int64, Bool)])
    func tooFew(series: [Double], window: Int64, enough: Bool) {
        var calculator = Self.calculator(window: window)
        let end = HeartRateVariabilityMeasuresTests.feed(series, into: &calculator)
        let result = calculator.summary(at: end)
        #expect((result.measures != nil) == enough, "\(series.count) × \(series[0]) ms: \(result)")
        #expect(result.intervals == series.count && result.rejected == 0)
    }

    @Test("every other interval rejected: 30 clean intervals but no successive difference, so no measures")
    func noDifferences() {
        var calculator = Self.calculator()
        let series = (0..<64).map { $0 % 2 == 0 ? 1000.0 : 100.0 }
        let end = HeartRateVariabilityMeasuresTests.feed(series, into: &calculator)
        let result = calculator.summary(at: end)
        #expect(result.intervals == 32 && result.rejected == 32 && result.measures == nil)
    }

    @Test("E4 IBI (beat-timed): a beat the detector left out is a gap — no difference across it, no reset of the reference")
    func beatTimedGap() throws {
        var calculator = Self.calculator()
        var beat = Double(Self.start)
        for (index, interval) in Self.alternating(61).enumerated() {
            beat += interval
            // The 31st beat is never reported: its interval and the time it took are missing from the stream.
            if index == 30 { continue }
            calculator.add(BeatIntervals(milliseconds: interval, timing: .beat, timestamp: Int64(beat)))
        }
        let result = calculator.summary(at: Int64(beat))
        #expect(result.intervals == 60 && result.rejected == 0)
        // Across the gap, 850 (index 29) and 850 (index 31) would differ by 0 and lower RMSSD below 50.
        #expect(abs(try #require(result.measures).rmssdMilliseconds - 50) < 1e-9)
    }

    @Test("strap RR (notification-timed): several intervals per notification, arriving up to a second late, make one unbroken run")
    func notificationTimed() throws {
        var calculator = Self.calculator()
        let series = Self.alternating(64)
        var beat = Double(Self.start)
        var pending: [Double] = []
        var nextNotification = Double(Self.start) + 1000
        for interval in series {
            beat += interval
            while beat > nextNotification {
                // Once a second, with whatever beats completed since the last one (none, one or two).
                if !pending.isEmpty {
                    calculator.add(BeatIntervals(milliseconds: pending, timing: .notification, timestamp: Int64(nextNotification)))
                }
                pending = []
                nextNotification += 1000
            }
            pending.append(interval)
        }
        let result = calculator.summary(at: Int64(nextNotification))
        #expect(result.rejected == 0)
        let measures = try #require(result.measures)
        #expect(abs(measures.rmssdMilliseconds - 50) < 1e-9, "every neighbour pair kept")
    }

    @Test("strap RR: intervals that stop coming for 5 s (contact lost) leave a gap; a disconnect is one too")
    func notificationGap() throws {
        var calculator = Self.calculator()
        var time = Self.start
        for interval in Self.alternating(40) {
            time += Int64(interval)
            calculator.add(BeatIntervals(milliseconds: [interval], timing: .notification, timestamp: time))
        }
        // Five seconds without intervals, then an 850 after the last 850: a difference of 0 if it were taken.
        time += 5000 + 850
        calculator.add(BeatIntervals(milliseconds: [850], timing: .notification, timestamp: time))
        for interval in Self.alternating(10) {
            time += Int64(interval)
            calculator.add(BeatIntervals(milliseconds: [interval], timing: .notification, timestamp: time))
        }
        calculator.breakSequence()
        time += 850
        calculator.add(BeatIntervals(milliseconds: [850], timing: .notification, timestamp: time))
        let result = calculator.summary(at: time)
        #expect(result.intervals == 52)
        #expect(abs(try #require(result.measures).rmssdMilliseconds - 50) < 1e-9, "no zero difference across either gap")
    }

    @Test("the beat clock of a strap never runs ahead of the notifications: intervals a little long do not break the run")
    func notificationClockClamps() throws {
        var calculator = Self.calculator()
        var time = Self.start
        for interval in Self.alternating(50) {
            // The strap's intervals read 2 % longer than the gateway's clock passes (clock drift, or jitter).
            time += Int64(interval / 1.02)
            calculator.add(BeatIntervals(milliseconds: [interval], timing: .notification, timestamp: time))
        }
        let result = calculator.summary(at: time)
        #expect(result.intervals == 50)
        #expect(abs(try #require(result.measures).rmssdMilliseconds - 50) < 1e-9)
    }
}
