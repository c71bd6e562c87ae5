/// Heart-rate variability of one device over a sliding window: beat intervals in, `HeartRateVariability` out.
///
/// Pure and clock-free: intervals come with their sample's timestamp (`BeatIntervals`), and `summary(at:)` is told
/// what time it is; the same input gives the same output. It does not choose between a device's sources (the
/// gateway feeds it one stream per device) and publishes nothing.
///
/// **Artifact rule** (docs/hrv.md). Each interval, as it arrives:
/// 1. outside `plausibleMilliseconds` (300–2000 ms: 200–30 bpm), or not a finite number: rejected;
/// 2. differing from the previous *accepted* interval by more than `maximumChange` (20 %) of it: rejected — the
///    rule of Malik, Cripps, Farrell and Camm, "Prognostic value of heart rate variability after myocardial
///    infarction. A comparison of different data-processing methods", Med Biol Eng Comput 27:603–611 (1989).
///    Comparing with the last accepted interval rather than the last one lets the normal beat after an ectopic
///    beat and its compensatory pause through;
/// 3. so that a real change of rhythm (or a first accepted interval that was itself an artifact) does not lock
///    every later beat out, `consistentRejectionsToFollow` (3) intervals in a row refused by rule 2 and each within
///    `maximumChange` of the one before are a new rhythm: the third is accepted and becomes the reference;
/// 4. otherwise accepted.
///
/// **Adjacency and gaps.** A successive difference is taken only between two accepted intervals that are
/// neighbours in the beat sequence: a rejected interval between them, or a gap, breaks the pair. A gap is found
/// from the beat times: a beat-timed source (`BeatIntervals.Timing.beat`) must put each beat within
/// `beatTimeTolerance` (150 ms, half the shortest plausible interval) of the previous beat plus this interval — a
/// beat left out by the detector moves it by a whole interval; for a notification-timed source a running clock
/// of beats (the previous beat plus this interval, never later than the notification's arrival) may fall at most
/// `notificationDelayLimit` (3 s) behind the arrival: further behind, beats went unreported. `breakSequence()`
/// (the device disconnected) is a gap. Gaps never reset the 20 % reference: rule 3 follows a changed rhythm.
///
/// **Enough data.** The measures need at least `minimumIntervals` (30) clean intervals and `minimumDifferences` (20)
/// successive differences in the window, and the clean intervals must cover at least `minimumCoverage` (50 %) of it.
/// 30 intervals bound the standard deviation's own sampling error to about 13 % (1/√(2(N−1))); Munoz et al.,
/// PLoS One 10:e0138921 (2015), found RMSSD valid from 10 s recordings and SDNN from 30 s, which 20 differences
/// and half of the 60 s default window cover; and a window labelled 60 s should describe most of those 60 s, not a
/// burst of beats in a window of gaps.
public struct HeartRateVariabilityCalculator: Sendable {
    public struct Rules: Sendable, Equatable {
        /// The sliding window, ms: the intervals whose beat came later than `now − window` count.
        public var windowMilliseconds: Int64
        public var plausibleMilliseconds: ClosedRange<Double> = 300...2000
        /// Malik's 20 %, as a fraction of the previous accepted interval.
        public var maximumChange = 0.2
        public var consistentRejectionsToFollow = 3
        public var beatTimeTolerance = 150.0
        public var notificationDelayLimit = 3000.0
        public var minimumIntervals = 30
        public var minimumDifferences = 20
        public var minimumCoverage = 0.5

        public init(windowMilliseconds: Int64 = 60_000) {
            self.windowMilliseconds = max(1, windowMilliseconds)
        }
    }

    /// One interval as it arrived, judged once.
    private struct Entry: Sendable {
        /// When the beat that ends the interval happened, Unix ms (fractional: a running sum of intervals).
        var beat: Double
        var milliseconds: Double
        var accepted: Bool
        /// The previous entry's beat is this interval's first beat: no gap between them.
        var followsPrevious: Bool
    }

    public let rules: Rules
    /// Entries in arrival order; those before `head` have left the window and wait to be compacted away.
    private var entries: [Entry] = []
    private var head = 0
    private var lastBeat: Double?
    private var reference: Double?
    private var candidate: (milliseconds: Double, count: Int)?
    /// More entries than a 300 s window of 300 ms beats holds four times over: a device whose timestamps run far
    /// ahead of `now` cannot grow the buffer for ever.
    private static let maximumEntries = 4096

    public init(rules: Rules = Rules()) {
        self.rules = rules
    }

    /// Whether nothing is held: no interval since the last one left the window.
    public var isEmpty: Bool { head == entries.count }

    /// Takes a sample's intervals, oldest first.
    public mutating func add(_ intervals: BeatIntervals) {
        guard !intervals.isEmpty else { return }
        // Beat k of a notification came no later than its arrival minus the intervals after it.
        var remaining = intervals.reduce(0) { $0 + Self.span($1) }
        for interval in intervals {
            remaining -= Self.span(interval)
            let latest = Double(intervals.timestamp) - remaining
            add(interval, latest: latest, timing: intervals.timing)
        }
        if entries.count - head > Self.maximumEntries {
            head = entries.count - Self.maximumEntries
            compact()
        }
    }

    /// The device disconnected (or its stream broke some other way): the next interval follows no beat.
    public mutating func breakSequence() {
        lastBeat = nil
    }

    /// The window ending at `now` (Unix ms); intervals that left it are dropped.
    public mutating func summary(at now: Int64) -> HeartRateVariability {
        let start = Double(now) - Double(rules.windowMilliseconds)
        while head < entries.count, entries[head].beat <= start { head += 1 }
        compact()
        var clean: [Double] = []
        var differences: [Double] = []
        clean.reserveCapacity(entries.count - head)
        differences.reserveCapacity(entries.count - head)
        var rejected = 0
        for index in head..<entries.count {
            let entry = entries[index]
            guard entry.accepted else {
                rejected += 1
                continue
            }
            clean.append(entry.milliseconds)
            // Both ends of a difference must be in the window.
            if index > head, entry.followsPrevious, entries[index - 1].accepted {
                differences.append(entry.milliseconds - entries[index - 1].milliseconds)
            }
        }
        let windowSeconds = Int(rules.windowMilliseconds / 1000)
        let covered = clean.reduce(0, +)
        let enough = clean.count >= rules.minimumIntervals && differences.count >= rules.minimumDifferences
            && covered >= rules.minimumCoverage * Double(rules.windowMilliseconds)
        return HeartRateVariability(measures: enough ? HeartRateVariability.Measures(intervals: clean, differences: differences) : nil,
                                    intervals: clean.count, rejected: rejected, windowSeconds: windowSeconds)
    }

    /// Drops the entries before `head` once they are the larger part: amortised, in place.
    private mutating func compact() {
        if head > 256, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }

    // MARK: One interval

    private mutating func add(_ milliseconds: Double, latest: Double, timing: BeatIntervals.Timing) {
        let span = Self.span(milliseconds)
        var follows = false
        var beat = latest
        if let lastBeat {
            let expected = lastBeat + span
            let lag = latest - expected
            switch timing {
            case .beat:
                follows = abs(lag) <= rules.beatTimeTolerance
            case .notification:
                follows = lag <= rules.notificationDelayLimit
                if follows { beat = min(expected, latest) }
            }
        }
        lastBeat = beat
        entries.append(Entry(beat: beat, milliseconds: milliseconds, accepted: judge(milliseconds), followsPrevious: follows))
    }

    /// Rules 1–4 of the artifact rule; updates the reference and the run of consistent rejections.
    private mutating func judge(_ milliseconds: Double) -> Bool {
        guard milliseconds.isFinite, rules.plausibleMilliseconds.contains(milliseconds) else {
            candidate = nil
            return false
        }
        if let reference, abs(milliseconds - reference) > rules.maximumChange * reference {
            if let run = candidate, abs(milliseconds - run.milliseconds) <= rules.maximumChange * run.milliseconds {
                candidate = (milliseconds, run.count + 1)
            } else {
                candidate = (milliseconds, 1)
            }
            guard let run = candidate, run.count >= rules.consistentRejectionsToFollow else { return false }
        }
        reference = milliseconds
        candidate = nil
        return true
    }

    /// How far an interval moves the beat clock: a value that is no interval at all (negative, not finite) moves it
    /// by nothing.
    private static func span(_ milliseconds: Double) -> Double {
        milliseconds.isFinite ? min(max(0, milliseconds), 1_000_000) : 0
    }
}
