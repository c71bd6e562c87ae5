/// The beat-to-beat intervals one sample carries, in milliseconds and in the order the beats came, with how the
/// sample's timestamp relates to them. Heart-rate variability is computed from these, whatever the device.
///
/// A collection without storage of its own for a single interval, so a beat costs no allocation on its way to
/// the calculator.
public struct BeatIntervals: Sendable, RandomAccessCollection {
    /// What the sample's timestamp says about when its beats happened.
    public enum Timing: Sendable, Equatable {
        /// The timestamp is the time of the beat that ends the last interval (the E4's IBI, detected in its BVP
        /// on the gateway; Polar's PPI carries its own beat times).
        case beat
        /// The timestamp is when the notification carrying the intervals arrived: every beat came before it, by up
        /// to about a second (a Heart Rate Measurement is notified once a second with the RR intervals measured
        /// since the last one).
        case notification
    }

    private enum Storage: Sendable {
        case one(Double)
        case several([Double])
    }

    public let timing: Timing
    /// Unix milliseconds, as `SensorSample.timestamp`.
    public let timestamp: Int64
    private let storage: Storage

    public init(milliseconds: Double, timing: Timing, timestamp: Int64) {
        self.timing = timing
        self.timestamp = timestamp
        storage = .one(milliseconds)
    }

    public init(milliseconds: [Double], timing: Timing, timestamp: Int64) {
        self.timing = timing
        self.timestamp = timestamp
        storage = .several(milliseconds)
    }

    public var startIndex: Int { 0 }

    public var endIndex: Int {
        switch storage {
        case .one: 1
        case .several(let intervals): intervals.count
        }
    }

    public subscript(position: Int) -> Double {
        switch storage {
        case .one(let interval):
            precondition(position == 0, "index out of range")
            return interval
        case .several(let intervals):
            return intervals[position]
        }
    }
}

extension SensorSample {
    /// The beat intervals this sample carries, nil when it carries none. This is the one place a source of beat
    /// intervals is named: a driver that adds one (Polar's PPI, say) adds its line here, and the switch has no
    /// `default`, so a new kind of reading must say whether it has beats.
    public var beatIntervals: BeatIntervals? {
        switch reading {
        case .heartRate(_, _, _, let rrIntervals) where !rrIntervals.isEmpty:
            BeatIntervals(milliseconds: rrIntervals, timing: .notification, timestamp: timestamp)
        case .ibi(let seconds):
            BeatIntervals(milliseconds: seconds * 1000, timing: .beat, timestamp: timestamp)
        case .pulseInterval(let interval) where !interval.blocker:
            // A blocked interval is one the device itself calls invalid.
            BeatIntervals(milliseconds: Double(interval.milliseconds), timing: .beat, timestamp: timestamp)
        case .heartRate, .vector, .quaternion, .uncalibratedVector, .eda, .bvp, .celsius, .spo2, .running, .cycling,
             .heartRateVariability, .ecg, .ppg, .pulseInterval, .steps:
            nil
        }
    }
}
