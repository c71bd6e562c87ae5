import Wearables

/// Heart-rate variability for every device that sends beat intervals: one `HeartRateVariabilityCalculator` per device,
/// fed from its samples, and a `sensor/hrv` sample per device every `hrv.interval_s`.
///
/// Pure, like `DeviceOutputMapper` which owns it: the caller passes both clocks (the monotonic one for the schedule,
/// Unix milliseconds for the window, which is in the samples' time), and publishes the samples that come back through
/// the ordinary sample path. It does not decide what a sample's intervals are (`SensorSample.beatIntervals` does).
///
/// **One stream per device.** A device that gives each beat its own time (`BeatIntervals.Timing.beat`) is measured
/// from that stream only: the E4 reports every beat as `ibi` and again as a heart-rate sample's RR interval, and
/// counting both would double every beat. A device seen with notification-timed intervals first that later sends
/// beat-timed ones starts afresh on them.
///
/// **When it publishes.** Every device whose window holds at least one interval, accepted or rejected, gets a
/// sample at each tick; its measures are left out while too few clean intervals remain. A device whose window
/// emptied (it stopped sending beats) gets none until beats come again.
public struct HeartRateVariabilityMonitor: Sendable {
    private struct Tracked: Sendable {
        var calculator: HeartRateVariabilityCalculator
        var timing: BeatIntervals.Timing
    }

    public let settings: Configuration.HeartRateVariabilitySection
    private var devices: [String: Tracked] = [:]
    /// The next tick; nil until a device first sends beats.
    public private(set) var nextDeadline: ContinuousClock.Instant?

    public init(settings: Configuration.HeartRateVariabilitySection = .init()) {
        self.settings = settings
    }

    private var interval: Duration { .seconds(settings.intervalSeconds) }

    /// Takes a sample of `device`; anything without beat intervals passes at the cost of one switch.
    public mutating func add(_ sample: SensorSample, device: String, at now: ContinuousClock.Instant) {
        guard settings.enabled, let beats = sample.beatIntervals else { return }
        // Found once and changed in place through its index: this runs for every sample with beats.
        let index = devices.index(forKey: device)
        if let index, devices.values[index].timing == .beat, beats.timing != .beat { return }
        if let index, devices.values[index].timing == beats.timing {
            devices.values[index].calculator.add(beats)
        } else {
            let window = Int64(settings.windowSeconds) * 1000
            var tracked = Tracked(calculator: HeartRateVariabilityCalculator(rules: .init(windowMilliseconds: window)),
                                  timing: beats.timing)
            tracked.calculator.add(beats)
            devices[device] = tracked
        }
        if nextDeadline == nil { nextDeadline = now + interval }
    }

    /// The device's link dropped: its next interval follows no beat the calculator knows.
    public mutating func disconnected(_ device: String) {
        devices[device]?.calculator.breakSequence()
    }

    /// The device was removed or renamed away from `device`.
    public mutating func forget(_ device: String) {
        devices[device] = nil
    }

    /// At a tick (`now` at or past `nextDeadline`): one `hrv` sample per device with intervals in its window, by
    /// device id; nothing between ticks.
    public mutating func due(at now: ContinuousClock.Instant, unixMilliseconds: Int64) -> [(device: String, sample: SensorSample)] {
        guard let deadline = nextDeadline, now >= deadline else { return [] }
        // The next tick keeps the rhythm unless the caller came later than a whole interval.
        nextDeadline = deadline + interval > now ? deadline + interval : now + interval
        var samples: [(device: String, sample: SensorSample)] = []
        for device in devices.keys.sorted() {
            let variability = devices[device]!.calculator.summary(at: unixMilliseconds)
            guard variability.intervals + variability.rejected > 0 else { continue }
            samples.append((device, SensorSample(sensor: .hrv, timestamp: unixMilliseconds,
                                                 reading: .heartRateVariability(variability))))
        }
        return samples
    }
}
