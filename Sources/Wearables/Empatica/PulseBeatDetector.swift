/// Finds heart beats in a BVP (PPG) stream and gives the inter-beat intervals (IBI) and heart rate that the
/// EmpaLink SDK computes on the phone — the E4 sends neither, so the gateway must.
///
/// The SDK reference says only: "IBIs are calculated in real time, using the latest samples of raw data from
/// the optical sensor. An algorithm filters out data affected by movements. After an initialization period of
/// about 20 seconds, IBIs are sent as soon as heart beats are detected." Its algorithm is not public; this one
/// is ours, made of textbook parts:
///
/// 1. **Band-pass** 0.5–5 Hz: a 4th-order Butterworth high-pass removes baseline wander and respiration, a
///    2nd-order Butterworth low-pass removes noise above the pulse's harmonics. The first sample is
///    subtracted first, so a constant input gives exactly zero.
/// 2. **Candidates** are local maxima of the filtered wave above an adaptive threshold — `thresholdFraction` of
///    the largest value in the last 2 s — and above `minimumAmplitude`, so a flat line or sensor-level noise
///    never qualifies.
/// 3. **Refractory period**: a candidate within max(60 / max bpm, half the typical interval) of the previous
///    one is the same beat's diastolic wave or a ripple; the higher of the two is kept. A beat is therefore
///    reported that period after it happened.
/// 4. **Timing**: a parabola through the peak sample and its neighbours places the beat between samples
///    (1/64 s would otherwise be the resolution). The beat time is the peak of the *filtered* pulse, which
///    the causal filters put a heart-rate-dependent few tens of ms away from the input's systolic peak; it
///    changes slowly with the rate, so intervals are unaffected. (Subtracting the filters' group delay at the
///    heart rate was tried and over-corrects by 0.2–0.5 s: the sharp systolic peak lives in the harmonics.)
/// 5. **Signal quality**: a beat counts only while the last 8 s of filtered signal are periodic — normalised
///    autocorrelation ≥ `minimumPeriodicity` at some lag of 30–220 bpm — and, once three beats have set a
///    typical height, only if it is 0.4–2 times that height and nothing in the last 3 s swung more than 2.5
///    times it. Noise is not periodic; movement is mostly too large. Both kinds of rejected beat also cut the
///    chain, so no interval is measured from them.
/// 6. **Interval checks**: an interval must lie within `heartRateLimits` and within `maximumIntervalChange`
///    of the median of the recent accepted ones. A missed or an extra beat breaks that and is dropped, not
///    published. Three mutually consistent intervals establish the rhythm; four rejections in a row, or 15 s
///    without an accepted beat, start it afresh, so a genuine change of rate or amplitude is followed.
/// 7. **Warm-up**: nothing is emitted for the first `warmUpMilliseconds` (20 s, the SDK's figure) after the
///    first sample; the detector learns the rhythm meanwhile.
///
/// Heart rate is 60 / the median of up to eight recent accepted intervals. A jump in the timestamps (lost
/// samples, a reconnect) restarts filtering and the rhythm's reference beat, but not the warm-up.
///
/// Pure and deterministic: time comes only from the timestamps given; the same samples give the same events.
/// It does not use the accelerometer (the SDK's movement filter may), and it cannot tell a movement that is
/// as periodic as the pulse and of the same height from the pulse.
public struct PulseBeatDetector: Sendable {
    public struct Configuration: Sendable, Equatable {
        public var samplesPerSecond: Int
        public var passband: ClosedRange<Double>
        public var warmUpMilliseconds: Int64
        public var heartRateLimits: ClosedRange<Double>
        public var thresholdFraction: Double
        /// The smallest filtered peak that can be a beat, in the input's units (E4: sensor counts).
        public var minimumAmplitude: Double
        public var maximumIntervalChange: Double
        public var minimumPeriodicity: Double

        public init(samplesPerSecond: Int = 64, passband: ClosedRange<Double> = 0.5...5.0,
                    warmUpMilliseconds: Int64 = 20_000, heartRateLimits: ClosedRange<Double> = 30...220,
                    thresholdFraction: Double = 0.5, minimumAmplitude: Double = 1.0,
                    maximumIntervalChange: Double = 0.25, minimumPeriodicity: Double = 0.5) {
            self.samplesPerSecond = max(1, samplesPerSecond)
            self.passband = passband
            self.warmUpMilliseconds = warmUpMilliseconds
            // At least 1 bpm, so that the longest interval and lag are finite.
            let slowest = max(1, heartRateLimits.lowerBound)
            self.heartRateLimits = slowest...max(slowest, heartRateLimits.upperBound)
            self.thresholdFraction = thresholdFraction
            self.minimumAmplitude = minimumAmplitude
            self.maximumIntervalChange = maximumIntervalChange
            self.minimumPeriodicity = minimumPeriodicity
        }
    }

    public let configuration: Configuration
    private let sampleRate: Double
    private let initialFilters: [BiquadFilter]
    private var filters: [BiquadFilter]
    private var origin: Double?
    private var firstTimestamp: Int64?
    private var lastTimestamp: Int64?
    private var filtered: SampleWindow
    private var pending: Peak?
    private var lastBeat: Peak?
    private var intervals: [Double] = []
    private var heights: [Double] = []
    private var lastAccepted: Double?
    private var consecutiveRejections = 0
    /// After this long without an accepted beat, the rhythm and height are learnt afresh.
    private static let lockTimeoutMilliseconds = 15_000.0

    /// A filtered peak: its time in Unix milliseconds (fractional, interpolated) and its height.
    private struct Peak: Sendable {
        var time: Double
        var height: Double
    }

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let rate = Double(configuration.samplesPerSecond)
        sampleRate = rate
        let low = min(configuration.passband.lowerBound, rate * 0.45)
        let high = min(configuration.passband.upperBound, rate * 0.45)
        let highPass = BiquadFilter.butterworthQ(order: 4).map {
            BiquadFilter.highPass(cutoffHertz: low, sampleRate: rate, q: $0)
        }
        let lowPass = BiquadFilter.butterworthQ(order: 2).map {
            BiquadFilter.lowPass(cutoffHertz: high, sampleRate: rate, q: $0)
        }
        initialFilters = highPass + lowPass
        filters = initialFilters
        filtered = SampleWindow(capacity: configuration.samplesPerSecond * 8)
    }

    /// Feeds one sample taken at `timestamp` (Unix milliseconds) and returns the beats it completes — usually
    /// none, at most one. Samples that are not finite, or times beyond ±2⁵² ms (which a Double could not hold
    /// to the millisecond), are ignored.
    public mutating func process(sample: Double, timestamp: Int64) -> [BeatEvent] {
        guard sample.isFinite, timestamp.magnitude < 1 << 52 else { return [] }
        if let lastTimestamp {
            // Backwards, or more than 3.5 sample periods later: samples are missing, so start filtering afresh.
            let (step, overflow) = timestamp.subtractingReportingOverflow(lastTimestamp)
            if overflow || step < 0 || Double(step) > 3500 / sampleRate { restartFiltering() }
        }
        if firstTimestamp == nil { firstTimestamp = timestamp }
        lastTimestamp = timestamp
        let origin = self.origin ?? sample
        self.origin = origin
        var value = sample - origin
        for index in filters.indices { value = filters[index].process(value) }
        filtered.append(value, at: timestamp)

        var events: [BeatEvent] = []
        if let pending, Double(timestamp) - pending.time >= refractoryMilliseconds {
            events += commit(pending)
            self.pending = nil
        }
        if let candidate = candidatePeak() {
            if let pending, candidate.time - pending.time < refractoryMilliseconds {
                if candidate.height > pending.height { self.pending = candidate }
            } else {
                if let pending { events += commit(pending) }
                pending = candidate
            }
        }
        return events
    }

    public mutating func process(samples: [Double], timestamps: [Int64]) -> [BeatEvent] {
        zip(samples, timestamps).flatMap { process(sample: $0, timestamp: $1) }
    }

    private var typicalInterval: Double? { intervals.count >= 3 ? Self.median(intervals) : nil }

    private var refractoryMilliseconds: Double {
        let shortest = 60_000 / configuration.heartRateLimits.upperBound
        guard let typicalInterval else { return shortest }
        return max(shortest, 500 * typicalInterval)
    }

    /// The middle of the last three filtered samples, if it is a peak that may be a beat.
    private func candidatePeak() -> Peak? {
        guard filtered.count >= 3 else { return nil }
        let before = filtered.value(age: 2), peak = filtered.value(age: 1), after = filtered.value(age: 0)
        guard peak > before, peak >= after, peak > configuration.minimumAmplitude else { return nil }
        let recentMaximum = filtered.maximum(ofLast: 2 * configuration.samplesPerSecond)
        guard peak >= configuration.thresholdFraction * recentMaximum else { return nil }
        // Vertex of the parabola through the three points, in samples from the middle one (−0.5…0.5).
        let curvature = before - 2 * peak + after
        let offset = curvature < 0 ? 0.5 * (before - after) / curvature : 0
        let spacing = Double(filtered.time(age: 0) - filtered.time(age: 2)) / 2
        let time = Double(filtered.time(age: 1)) + offset * spacing
        return Peak(time: time, height: peak)
    }

    private mutating func commit(_ beat: Peak) -> [BeatEvent] {
        if let lastAccepted, beat.time - lastAccepted > Self.lockTimeoutMilliseconds {
            // No beat has passed for a while: whatever rhythm and height we knew may no longer hold.
            intervals.removeAll()
            heights.removeAll()
            consecutiveRejections = 0
        }
        guard isPeriodic(), isPlausiblyTall(beat) else {
            lastBeat = nil
            return []
        }
        guard let previous = lastBeat else {
            lastBeat = beat
            return []
        }
        lastBeat = beat
        let interval = (beat.time - previous.time) / 1000
        guard interval > 0, configuration.heartRateLimits.contains(60 / interval) else { return [] }
        guard let typicalInterval else {
            // Establishing the rhythm: keep consecutive intervals that agree with each other.
            if let last = intervals.last, abs(interval - last) > configuration.maximumIntervalChange * last {
                intervals = [interval]
            } else {
                intervals.append(interval)
            }
            accept(beat)
            return []
        }
        guard abs(interval - typicalInterval) <= configuration.maximumIntervalChange * typicalInterval else {
            consecutiveRejections += 1
            if consecutiveRejections >= 4 {
                intervals = [interval]
                consecutiveRejections = 0
            }
            return []
        }
        consecutiveRejections = 0
        intervals.append(interval)
        if intervals.count > 8 { intervals.removeFirst() }
        accept(beat)
        let warmUpEnd = firstTimestamp.map { Double($0) + Double(configuration.warmUpMilliseconds) } ?? .infinity
        guard beat.time >= warmUpEnd else { return [] }
        return [BeatEvent(timestamp: Int64(beat.time.rounded()), interval: interval,
                          heartRate: 60 / Self.median(intervals))]
    }

    private mutating func accept(_ beat: Peak) {
        lastAccepted = beat.time
        heights.append(beat.height)
        if heights.count > 8 { heights.removeFirst() }
    }

    /// Whether the beat is as tall as the recent accepted ones (0.4–2×) and the last 3 s hold no swing of more
    /// than 2.5 times their height — a movement rather than a pulse. True until three beats set the height.
    private func isPlausiblyTall(_ beat: Peak) -> Bool {
        guard heights.count >= 3 else { return true }
        let typical = Self.median(heights)
        guard beat.height >= 0.4 * typical, beat.height <= 2 * typical else { return false }
        return filtered.maximumMagnitude(ofLast: 3 * configuration.samplesPerSecond) <= 2.5 * typical
    }

    /// Whether the last 8 s of filtered signal repeat at some heart-rate lag: the largest normalised
    /// autocorrelation over lags of 30–220 bpm reaches `minimumPeriodicity`. Needs 4 s of signal.
    private func isPeriodic() -> Bool {
        let count = filtered.count
        guard count >= 4 * configuration.samplesPerSecond else { return false }
        let values = filtered.values(last: count)
        let shortestLag = max(1, Int((sampleRate * 60 / configuration.heartRateLimits.upperBound).rounded(.down)))
        let longestLag = min(count / 2, Int((sampleRate * 60 / configuration.heartRateLimits.lowerBound).rounded(.up)))
        guard shortestLag <= longestLag else { return false }
        var best = -1.0
        for lag in shortestLag...longestLag {
            var product = 0.0, energyLate = 0.0, energyEarly = 0.0
            for index in lag..<count {
                let late = values[index], early = values[index - lag]
                product += late * early
                energyLate += late * late
                energyEarly += early * early
            }
            let energy = (energyLate * energyEarly).squareRoot()
            if energy > 0 { best = max(best, product / energy) }
        }
        return best >= configuration.minimumPeriodicity
    }

    private mutating func restartFiltering() {
        filters = initialFilters
        origin = nil
        filtered.removeAll()
        pending = nil
        lastBeat = nil
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

/// A heart beat found in BVP: what the driver publishes as `ibi` and `heart_rate`.
public struct BeatEvent: Sendable, Equatable {
    /// When the beat's pulse peaked, Unix milliseconds (the SDK stamps an IBI with its beat, too).
    public let timestamp: Int64
    /// Seconds since the previous beat: the inter-beat interval.
    public let interval: Double
    /// Beats per minute over the last few accepted intervals (their median), not just this one.
    public let heartRate: Double

    public init(timestamp: Int64, interval: Double, heartRate: Double) {
        self.timestamp = timestamp
        self.interval = interval
        self.heartRate = heartRate
    }
}

/// The last few seconds of filtered samples and their times, oldest overwritten first.
private struct SampleWindow: Sendable {
    private var values: [Double]
    private var times: [Int64]
    private var next = 0
    private(set) var count = 0

    init(capacity: Int) {
        values = Array(repeating: 0, count: max(3, capacity))
        times = Array(repeating: 0, count: max(3, capacity))
    }

    mutating func append(_ value: Double, at time: Int64) {
        values[next] = value
        times[next] = time
        next = (next + 1) % values.count
        count = min(count + 1, values.count)
    }

    mutating func removeAll() {
        next = 0
        count = 0
    }

    /// Age 0 is the newest sample; the caller keeps `age < count`.
    private func slot(age: Int) -> Int { (next - 1 - age + 2 * values.count) % values.count }

    func value(age: Int) -> Double { values[slot(age: age)] }

    func time(age: Int) -> Int64 { times[slot(age: age)] }

    func maximum(ofLast n: Int) -> Double {
        (0..<min(n, count)).reduce(-Double.infinity) { max($0, value(age: $1)) }
    }

    func maximumMagnitude(ofLast n: Int) -> Double {
        (0..<min(n, count)).reduce(0) { max($0, abs(value(age: $1))) }
    }

    /// The last `n` values, oldest first.
    func values(last n: Int) -> [Double] {
        let n = min(n, count)
        return (0..<n).map { value(age: n - 1 - $0) }
    }
}
