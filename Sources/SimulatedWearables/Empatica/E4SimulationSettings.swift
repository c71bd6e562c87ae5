import Wearables

/// What the simulated E4's wearer is like: the heart rate over time, how noisy the pulse is, whether the wrist
/// rests or walks, and the levels skin conductance and skin temperature wander around. Read from a scenario's
/// `options` by `init(reading:)`, which is the one place their names, defaults and ranges are defined.
///
/// Options: `bpm` (resting heart rate, 70, 30…200), `bpm_variation` (amplitude of the slow swing around it,
/// 10, 0…60; `bpm` ± it must stay within 30…220), `bpm_period_s` (length of one swing in seconds, 300,
/// 60…86400), `ppg_noise` (white noise on the pulse relative to its height, 0.03, 0…1), `motion` (`rest` or
/// `walk`), `eda_us` (skin conductance level in µS, 2, 0.1…50) and `skin_temperature_c` (33, 25…40).
public struct E4SimulationSettings: Sendable, Equatable {
    public var heartRate: E4HeartRateWave
    /// Standard deviation of white noise on the pulse, relative to the pulse height (`SyntheticPPG.noise`).
    public var ppgNoise: Double
    public var activity: E4WristActivity
    /// The tonic skin conductance level, in µS, before responses.
    public var skinConductance: Double
    public var skinTemperature: Double

    public init(heartRate: E4HeartRateWave = E4HeartRateWave(), ppgNoise: Double = 0.03,
                activity: E4WristActivity = .rest, skinConductance: Double = 2, skinTemperature: Double = 33) {
        self.heartRate = heartRate
        self.ppgNoise = ppgNoise
        self.activity = activity
        self.skinConductance = skinConductance
        self.skinTemperature = skinTemperature
    }

    public init(reading options: inout SimulationOptionReader) throws(SimulatedDeviceConfigurationError) {
        let bpm = try options.double("bpm", default: 70, in: 30...200)
        let variation = try options.double("bpm_variation", default: 10, in: 0...60)
        guard bpm - variation >= 30, bpm + variation <= 220 else {
            throw .invalidOption(key: "bpm_variation",
                                 reason: "bpm ± bpm_variation must stay within 30…220, got \(bpm) ± \(variation)")
        }
        let period = try options.double("bpm_period_s", default: 300, in: 60...86_400)
        heartRate = E4HeartRateWave(restingBPM: bpm, variation: variation, periodSeconds: period)
        ppgNoise = try options.double("ppg_noise", default: 0.03, in: 0...1)
        let motion = try options.string("motion", default: E4WristActivity.rest.rawValue,
                                        allowed: E4WristActivity.allCases.map(\.rawValue))
        activity = E4WristActivity(rawValue: motion) ?? .rest
        skinConductance = try options.double("eda_us", default: 2, in: 0.1...50)
        skinTemperature = try options.double("skin_temperature_c", default: 33, in: 25...40)
    }
}

/// What the wrist is doing, for the accelerometer (and how often the skin responds).
public enum E4WristActivity: String, Sendable, CaseIterable {
    /// Lying on a desk or the lap: gravity only, a slowly shifting posture, no steps.
    case rest
    /// Walking at about 110 steps a minute with the arm swinging.
    case walk
}

/// The true heart rate of the simulated E4's wearer: a triangle wave of `variation` bpm around `restingBPM`, one
/// swing every `periodSeconds`, as a function of Unix time:
///
///     bpm(t) = restingBPM + variation · tri(t / periodSeconds)
///     tri(x) = 4x for x in [0, ¼], 2 − 4x for x in [¼, ¾], 4x − 4 for x in [¾, 1), repeating every 1
///
/// so the rate is `restingBPM` and rising at every multiple of the period after 1970-01-01 UTC, highest a
/// quarter period later and lowest three quarters later. A triangle rather than a sine because it is piecewise
/// linear, so the PPG generator's `HeartRateSchedule` represents it *exactly* (`schedule(fromUnixSeconds:
/// duration:)`) and the rate a test reads from this function is precisely the rate the beats were drawn from.
/// A function of Unix time rather than of time since connecting, because the simulated E4's clock is the start
/// command's Unix time and the gateway times every sample from the same start: a test can ask for the true rate
/// at any published timestamp, and a reconnect does not restart the wearer's heart.
///
/// Slow on purpose: the fastest change is 4 · variation / period bpm per second (0.13 with the defaults). The
/// beat detector's rate is the median of its last eight intervals, so it runs about 5 s behind; keep that change
/// × 5 s well inside whatever tolerance a test compares with.
public struct E4HeartRateWave: Sendable, Equatable {
    public var restingBPM: Double
    public var variation: Double
    public var periodSeconds: Double

    public init(restingBPM: Double = 70, variation: Double = 10, periodSeconds: Double = 300) {
        self.restingBPM = restingBPM
        self.variation = variation
        self.periodSeconds = max(1, periodSeconds)
    }

    public func bpm(atUnixSeconds seconds: Double) -> Double {
        restingBPM + variation * Self.triangle(seconds / periodSeconds)
    }

    /// The repeating triangle, period 1: 0 at 0, 1 at ¼, 0 at ½, −1 at ¾.
    static func triangle(_ x: Double) -> Double {
        let phase = x - x.rounded(.down)
        if phase < 0.25 { return 4 * phase }
        if phase < 0.75 { return 2 - 4 * phase }
        return 4 * phase - 4
    }

    /// The wave from `start` (Unix seconds) for `duration` seconds, as a schedule in seconds since `start`: the
    /// start, every corner (a quarter period and then every half period after each multiple of the period) and
    /// the end, between which the triangle is linear, as `HeartRateSchedule` interpolates.
    public func schedule(fromUnixSeconds start: Double, duration: Double) -> HeartRateSchedule {
        let end = start + max(0, duration)
        var points = [HeartRateSchedule.Point(seconds: 0, bpm: bpm(atUnixSeconds: start))]
        if variation != 0 {
            // Corner k is at (¼ + k/2) periods: a peak for even k, a trough for odd k.
            var corner = Int(((start / periodSeconds - 0.25) * 2).rounded(.down)) + 1
            while true {
                let time = (0.25 + Double(corner) / 2) * periodSeconds
                guard time < end else { break }
                if time > start {
                    let bpm = restingBPM + (corner.isMultiple(of: 2) ? variation : -variation)
                    points.append(.init(seconds: time - start, bpm: bpm))
                }
                corner += 1
            }
        }
        points.append(.init(seconds: end - start, bpm: bpm(atUnixSeconds: end)))
        return HeartRateSchedule(points)
    }
}
