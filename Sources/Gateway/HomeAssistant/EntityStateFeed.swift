import Wearables

/// Feeds Home Assistant's entities from fast sensor streams without flooding its recorder: each entity's topic
/// gets at most one value per interval — the first value at once, then what came during the interval when it
/// closes: the mean for rates that wander sample to sample (heart rate, EDA, inter-beat interval, running speed and
/// cadence), the latest for slow or spot values (temperatures, SpO2, pulse rate) and for heart-rate variability (its
/// window already averages; `None` when it has no value). The raw streams are untouched.
///
/// Pure: the caller passes the time, publishes what comes back, and calls `due(at:)` from a timer so the last
/// values of a stream that stopped still arrive. BVP and motion axes are not fed at all: a number sampled every
/// few seconds from a 64 Hz waveform or a 50 Hz IMU means nothing on a dashboard.
public struct EntityStateFeed: Sendable {
    /// One entity's value, ready to publish on `<base>/<device>/ha/<key>`.
    public struct Update: Sendable, Equatable {
        public var device: String
        public var key: String
        public var value: Double
    }

    /// `latestOrUnknown`: the latest value, and NaN (published as `None`, which Home Assistant shows as unknown)
    /// when the stream says it has none — heart-rate variability with too few clean intervals.
    enum Aggregate { case mean, latest, latestOrUnknown }

    private struct Pending {
        var sum = 0.0
        var count = 0
        var latest = 0.0
        var windowStart: ContinuousClock.Instant
    }

    /// One entity of a device: its key, how it aggregates, and what its interval holds. A device has a handful,
    /// found by comparing keys (short literals, equal in a few instructions) instead of hashing them.
    private struct Entity {
        let key: String
        let aggregate: Aggregate
        var pending: Pending
    }

    public let interval: Duration
    private var pending: [String: [Entity]] = [:]

    public init(interval: Duration) {
        self.interval = interval
    }

    /// Calls `body` with each entity key and value a sample feeds, and how it is aggregated. A visit, not an array:
    /// this runs for every sample, and an array per sample was an allocation each (issue 21).
    static func forEachValue(of sample: SensorSample, _ body: (_ key: String, _ value: Double, _ aggregate: Aggregate) -> Void) {
        switch sample.reading {
        case .heartRate(let bpm, _, _, let rr):
            // A chest strap's RR intervals are its inter-beat intervals: the same entity as the E4's.
            body("heart_rate", Double(bpm), .mean)
            for interval in rr { body("ibi", interval, .mean) }
        case .eda(let microsiemens): body("eda", microsiemens, .mean)
        case .ibi(let seconds): body("ibi", seconds * 1000, .mean)
        case .celsius(let celsius): body(sample.sensor == .skinTemperature ? "skin_temperature" : "temperature", celsius, .latest)
        case .spo2(let percent, let pulse):
            body("spo2", percent, .latest)
            if let pulse { body("pulse_rate", pulse, .latest) }
        case .running(let speed, let cadence, _, _, _):
            body("running_speed", speed, .mean)
            body("running_cadence", Double(cadence), .mean)
        case .cycling(_, _, let speed, let cadence):
            if let speed { body("cycling_speed", speed, .mean) }
            if let cadence { body("cycling_cadence", cadence, .mean) }
        case .heartRateVariability(let variability):
            body("hrv_rmssd", variability.measures?.rmssdMilliseconds ?? .nan, .latestOrUnknown)
            body("hrv_sdnn", variability.measures?.sdnnMilliseconds ?? .nan, .latestOrUnknown)
            body("hrv_mean_hr", variability.measures?.meanHeartRateBPM ?? .nan, .latestOrUnknown)
        case .pulseInterval(let interval) where !interval.blocker: body("ibi", Double(interval.milliseconds), .mean)
        case .steps(let count): body("steps", Double(count), .latest)
        case .vector, .quaternion, .uncalibratedVector, .bvp, .ecg, .ppg, .pulseInterval: break
        }
    }

    /// Takes one sample; answers the updates to publish now.
    public mutating func add(_ sample: SensorSample, device: String, at now: ContinuousClock.Instant) -> [Update] {
        var updates: [Update] = []
        // The device looked up at the sample's first value (a motion sample feeds none and looks nothing up), and its
        // entities changed in place through the index.
        var entities: [String: [Entity]].Index?
        Self.forEachValue(of: sample) { key, value, aggregate in
            guard value.isFinite || aggregate == .latestOrUnknown else { return }
            if entities == nil { entities = pending.index(forKey: device) ?? addDevice(device) }
            if let due = Self.take(value, key: key, aggregate: aggregate, into: &pending.values[entities!], at: now,
                                   interval: interval) {
                updates.append(Update(device: device, key: key, value: due))
            }
        }
        return updates
    }

    private mutating func addDevice(_ device: String) -> [String: [Entity]].Index {
        pending[device] = []
        return pending.index(forKey: device)!
    }

    /// Adds a value to its entity's interval; answers the value to publish now, if its interval closed (or it is
    /// the entity's first: that goes out at once, and its interval starts now).
    private static func take(_ value: Double, key: String, aggregate: Aggregate, into entities: inout [Entity],
                             at now: ContinuousClock.Instant, interval: Duration) -> Double? {
        // By index, comparing each key in place: `firstIndex(where:)` hands the closure a copy of each entity.
        guard let index = entities.indices.first(where: { entities[$0].key == key }) else {
            entities.append(Entity(key: key, aggregate: aggregate, pending: Pending(windowStart: now)))
            return value
        }
        entities[index].pending.sum += value
        entities[index].pending.count += 1
        entities[index].pending.latest = value
        guard now - entities[index].pending.windowStart >= interval else { return nil }
        defer { entities[index].pending = Pending(windowStart: now) }
        return Self.aggregate(entities[index])
    }

    /// Values held for intervals that closed by `now`, for a timer to publish.
    public mutating func due(at now: ContinuousClock.Instant) -> [Update] {
        var updates: [Update] = []
        for device in pending.keys.sorted() {
            let entities = pending[device]!
            for index in entities.indices.sorted(by: { entities[$0].key < entities[$1].key }) {
                let entity = entities[index]
                guard entity.pending.count > 0, now - entity.pending.windowStart >= interval else { continue }
                updates.append(Update(device: device, key: entity.key, value: Self.aggregate(entity)))
                pending[device]![index].pending = Pending(windowStart: now)
            }
        }
        return updates
    }

    /// The device went away or was removed: nothing of it is held.
    public mutating func forget(_ device: String) { pending[device] = nil }

    /// The mean for the keys `forEachValue` marks so (rates that wander sample to sample), else the latest.
    private static func aggregate(_ entity: Entity) -> Double {
        let value = entity.aggregate == .mean ? entity.pending.sum / Double(entity.pending.count) : entity.pending.latest
        return (value * 10).rounded() / 10
    }
}
