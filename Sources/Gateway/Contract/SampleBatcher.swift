import Wearables

/// What the batcher says to publish on `<id>/sensor/<sensor>`.
public struct SamplePublication: Sendable, Equatable {
    public var device: String
    public var sensor: SensorKind
    public var samples: [SensorSample]
    /// Batching is on for this device: publish `{"samples":[…]}`, even for one sample, so a consumer that
    /// asked for batches always gets the same shape.
    public var isBatch: Bool

    public init(device: String, sensor: SensorKind, samples: [SensorSample], isBatch: Bool) {
        self.device = device
        self.sensor = sensor
        self.samples = samples
        self.isBatch = isBatch
    }

    public var payload: [UInt8] {
        isBatch ? SamplePayload.batch(samples) : SamplePayload.single(samples[0])
    }
}

/// Collects samples per device and sensor for the device's `batch_ms` window (the `device/options`
/// option), so a 50 Hz accelerometer can go out as a few messages a second instead of fifty.
///
/// A pure state machine: it is fed samples and the monotonic time, and answers what to publish now. It
/// owns no timer; the caller asks ``nextDeadline`` and calls ``due(at:)`` then. Given the same inputs it
/// gives the same outputs.
///
/// - A window opens with the first sample of a device and sensor and closes `batch_ms` later; samples that
///   arrive after it closed start the next window (after the closed one is handed out).
/// - A window that reaches ``maximumBatchSize`` samples is handed out at once, bounding message size and
///   memory whatever the sample rate.
/// - With batching off (window 0, the default) every sample is handed straight back.
/// - Output order: by window deadline, then device id, then sensor name.
public struct SampleBatcher: Sendable {
    public static let defaultMaximumBatchSize = 500

    public let maximumBatchSize: Int
    private var windows: [String: Duration] = [:]
    private var buffers: [BufferKey: Buffer] = [:]

    private struct BufferKey: Hashable, Sendable {
        var device: String
        var sensor: SensorKind
    }

    private struct Buffer: Sendable {
        var samples: [SensorSample]
        var deadline: ContinuousClock.Instant
    }

    public init(maximumBatchSize: Int = SampleBatcher.defaultMaximumBatchSize) {
        self.maximumBatchSize = max(1, maximumBatchSize)
    }

    /// The device's window; `.zero` when batching is off.
    public func window(forDevice device: String) -> Duration { windows[device] ?? .zero }

    /// Changes a device's window (`batch_ms`); zero or less turns batching off. Samples collected under
    /// the old window are handed out first.
    public mutating func setWindow(_ window: Duration, forDevice device: String) -> [SamplePublication] {
        let window = max(window, .zero)
        guard window != self.window(forDevice: device) else { return [] }
        let pending = flush(device: device)
        windows[device] = window == .zero ? nil : window
        return pending
    }

    /// Takes one sample arriving at `now`; returns what to publish now, possibly nothing.
    public mutating func add(_ sample: SensorSample, device: String, at now: ContinuousClock.Instant) -> [SamplePublication] {
        let window = window(forDevice: device)
        guard window > .zero else {
            return [SamplePublication(device: device, sensor: sample.sensor, samples: [sample], isBatch: false)]
        }
        let key = BufferKey(device: device, sensor: sample.sensor)
        var output: [SamplePublication] = []
        if let buffer = buffers[key], buffer.deadline <= now {
            output.append(publication(key, buffer))
            buffers[key] = nil
        }
        if buffers[key] == nil {
            var samples: [SensorSample] = []
            samples.reserveCapacity(min(maximumBatchSize, 64))
            buffers[key] = Buffer(samples: samples, deadline: now + window)
        }
        buffers[key]!.samples.append(sample)
        if buffers[key]!.samples.count >= maximumBatchSize {
            output.append(publication(key, buffers.removeValue(forKey: key)!))
        }
        return output
    }

    /// The windows that have closed by `now`.
    public mutating func due(at now: ContinuousClock.Instant) -> [SamplePublication] {
        let closed = buffers.filter { $0.value.deadline <= now }
        for key in closed.keys { buffers[key] = nil }
        return Self.ordered(closed).map { publication($0.key, $0.value) }
    }

    /// When the earliest open window closes; `nil` when nothing is waiting.
    public var nextDeadline: ContinuousClock.Instant? { buffers.values.map(\.deadline).min() }

    /// Everything collected for one device, e.g. when it disconnects or is removed.
    public mutating func flush(device: String) -> [SamplePublication] {
        let pending = buffers.filter { $0.key.device == device }
        for key in pending.keys { buffers[key] = nil }
        return Self.ordered(pending).map { publication($0.key, $0.value) }
    }

    /// Everything collected, e.g. at shutdown.
    public mutating func flushAll() -> [SamplePublication] {
        let pending = buffers
        buffers = [:]
        return Self.ordered(pending).map { publication($0.key, $0.value) }
    }

    /// Samples waiting across all windows.
    public var pendingCount: Int { buffers.values.reduce(0) { $0 + $1.samples.count } }

    private func publication(_ key: BufferKey, _ buffer: Buffer) -> SamplePublication {
        SamplePublication(device: key.device, sensor: key.sensor, samples: buffer.samples, isBatch: true)
    }

    private static func ordered(_ buffers: [BufferKey: Buffer]) -> [(key: BufferKey, value: Buffer)] {
        buffers.sorted { lhs, rhs in
            if lhs.value.deadline != rhs.value.deadline { return lhs.value.deadline < rhs.value.deadline }
            if lhs.key.device != rhs.key.device { return lhs.key.device < rhs.key.device }
            return lhs.key.sensor.rawValue < rhs.key.sensor.rawValue
        }
    }
}
