import Foundation
import Wearables

/// A synthetic photoplethysmogram (BVP) with known beat times: what the simulated E4 streams and what the
/// beat detector's tests measure against. Pure and seeded: the same configuration and seed give the same
/// samples on every run and machine, and nothing reads a clock.
///
/// Each beat is a pulse made of two waves, a model common in the PPG literature: the systolic wave (a steep
/// rise, σ 70 ms, and a slower fall, σ 110 ms, peaking at the beat time) and the reflected diastolic wave
/// (`dicroticRatio` of its height, 300 ms later, σ 80 ms), whose overlap leaves the dicrotic notch between
/// them. The widths and the delay shrink with √(interval / 0.8 s), so fast beats do not run into the next
/// one. Intervals follow `heartRate` with Gaussian beat-to-beat variability, clamped to 0.25…2.5 s.
/// Respiration (0.25 Hz) moves the baseline and scales the pulse by ±10 %; a 0.07 Hz drift adds to the
/// baseline; Gaussian noise and motion-artefact bursts are optional. Values are in sensor counts, pulse up.
///
/// A beat's "true time" is the peak of its systolic wave — what a detector of pulse peaks should find.
/// What this does not model: the E4's own filtering, the red channel, skin tone or perfusion changes.
public struct SyntheticPPG: Sendable {
    public struct Configuration: Sendable, Equatable {
        public var samplesPerSecond: Int
        public var heartRate: HeartRateSchedule
        /// Standard deviation of each interval, relative to 60 / bpm.
        public var beatToBeatVariability: Double
        /// Height of the systolic wave, in sensor counts.
        public var pulseAmplitude: Double
        /// Height of the diastolic wave relative to the systolic one.
        public var dicroticRatio: Double
        /// Amplitude of the baseline's slow movement, relative to `pulseAmplitude`.
        public var baselineWander: Double
        /// Standard deviation of white Gaussian noise, relative to `pulseAmplitude`.
        public var noise: Double
        public var motionArtefacts: [MotionArtefact]

        public init(samplesPerSecond: Int = 64, heartRate: HeartRateSchedule = HeartRateSchedule(bpm: 70),
                    beatToBeatVariability: Double = 0.02, pulseAmplitude: Double = 100, dicroticRatio: Double = 0.4,
                    baselineWander: Double = 0.3, noise: Double = 0, motionArtefacts: [MotionArtefact] = []) {
            self.samplesPerSecond = max(1, samplesPerSecond)
            self.heartRate = heartRate
            self.beatToBeatVariability = beatToBeatVariability
            self.pulseAmplitude = pulseAmplitude
            self.dicroticRatio = dicroticRatio
            self.baselineWander = baselineWander
            self.noise = noise
            self.motionArtefacts = motionArtefacts
        }
    }

    /// One sample, and the true beat that happened since the previous one, if any.
    public struct Sample: Sendable, Equatable {
        public let value: Double
        /// Seconds since the first sample of the beat's systolic peak.
        public let beat: Double?
    }

    public let configuration: Configuration
    /// Samples produced so far; the next sample is at `index / samplesPerSecond` seconds.
    public private(set) var index = 0
    private var beatRandom: SimulationRandom
    private var noiseRandom: SimulationRandom
    private let respirationPhase: Double
    private let driftPhase: Double
    private let artefactWaves: [[ArtefactWave]]
    /// Beats from one second ago up to the generated horizon, each with the interval that shapes it.
    private var beats: [(time: Double, interval: Double)] = []
    private var nextBeatToReport = 0
    private var reportedUpTo = -Double.infinity

    public init(configuration: Configuration = Configuration(), seed: UInt64) {
        self.configuration = configuration
        var random = SimulationRandom(seed: seed)
        beatRandom = random.split()
        noiseRandom = random.split()
        var phases = random.split()
        respirationPhase = Double.random(in: 0..<(2 * .pi), using: &phases)
        driftPhase = Double.random(in: 0..<(2 * .pi), using: &phases)
        var artefactRandom = random.split()
        artefactWaves = configuration.motionArtefacts.map { _ in
            (0..<3).map { _ in
                ArtefactWave(hertz: Double.random(in: 0.8...3.5, using: &artefactRandom),
                             phase: Double.random(in: 0..<(2 * .pi), using: &artefactRandom),
                             weight: Double.random(in: 0.3...1.0, using: &artefactRandom))
            }
        }
        let firstInterval = 60 / max(configuration.heartRate.bpm(at: 0), 1)
        beats.append((Double.random(in: 0.2..<(0.2 + firstInterval), using: &beatRandom), firstInterval))
    }

    /// The time of the next sample, in seconds since the first.
    public var time: Double { Double(index) / Double(configuration.samplesPerSecond) }

    public mutating func next() -> Sample {
        let t = time
        index += 1
        extendBeats(through: t + 1)
        beats.removeAll { $0.time < t - 1.5 }

        let amplitude = configuration.pulseAmplitude
        let respiration = sin(2 * .pi * 0.25 * t + respirationPhase)
        var value = 0.0
        for beat in beats where abs(t - beat.time) < 1.2 {
            value += pulse(at: t - beat.time, interval: beat.interval)
        }
        value *= amplitude * (1 + 0.1 * respiration)
        let drift = sin(2 * .pi * 0.07 * t + driftPhase)
        value += configuration.baselineWander * amplitude * (0.7 * respiration + 0.3 * drift)
        if configuration.noise > 0 { value += configuration.noise * amplitude * gaussian(using: &noiseRandom) }
        for (artefact, waves) in zip(configuration.motionArtefacts, artefactWaves) {
            value += artefact.value(at: t, waves: waves) * amplitude
        }

        var reported: Double?
        if let beat = beats.first(where: { $0.time > reportedUpTo && $0.time <= t }) {
            reported = beat.time
            reportedUpTo = beat.time
        }
        return Sample(value: value, beat: reported)
    }

    public mutating func next(_ count: Int) -> [Sample] { (0..<max(0, count)).map { _ in next() } }

    /// The pulse shape, `offset` seconds after the systolic peak, for a beat of `interval` seconds; peak 1.
    private func pulse(at offset: Double, interval: Double) -> Double {
        let scale = min(max((interval / 0.8).squareRoot(), 0.55), 1.25)
        let systolicWidth = (offset < 0 ? 0.07 : 0.11) * scale
        let systolic = exp(-0.5 * (offset / systolicWidth) * (offset / systolicWidth))
        let diastolicOffset = (offset - 0.30 * scale) / (0.08 * scale)
        return systolic + configuration.dicroticRatio * exp(-0.5 * diastolicOffset * diastolicOffset)
    }

    private mutating func extendBeats(through horizon: Double) {
        while let last = beats.last, last.time < horizon {
            let mean = 60 / max(configuration.heartRate.bpm(at: last.time), 1)
            let jitter = 1 + configuration.beatToBeatVariability * gaussian(using: &beatRandom)
            let interval = min(max(mean * jitter, 0.25), 2.5)
            beats.append((last.time + interval, interval))
        }
    }

    /// Box–Muller: one standard normal number from two uniform ones.
    private func gaussian(using random: inout SimulationRandom) -> Double {
        let u = Double.random(in: Double.ulpOfOne..<1, using: &random)
        let v = Double.random(in: 0..<1, using: &random)
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }
}

/// A heart rate that moves linearly between points in time (seconds since the start) and stays at the first
/// and last values outside them.
public struct HeartRateSchedule: Sendable, Equatable {
    public struct Point: Sendable, Equatable {
        public var seconds: Double
        public var bpm: Double

        public init(seconds: Double, bpm: Double) {
            self.seconds = seconds
            self.bpm = bpm
        }
    }

    public let points: [Point]

    public init(_ points: [Point]) {
        self.points = points.isEmpty ? [Point(seconds: 0, bpm: 70)] : points.sorted { $0.seconds < $1.seconds }
    }

    public init(bpm: Double) { self.init([Point(seconds: 0, bpm: bpm)]) }

    public func bpm(at seconds: Double) -> Double {
        guard let first = points.first, let last = points.last else { return 70 }
        if seconds <= first.seconds { return first.bpm }
        if seconds >= last.seconds { return last.bpm }
        let upper = points.firstIndex { $0.seconds > seconds } ?? points.count - 1
        let a = points[upper - 1], b = points[upper]
        return a.bpm + (b.bpm - a.bpm) * (seconds - a.seconds) / (b.seconds - a.seconds)
    }
}

/// A burst of movement: large, irregular swings in the heart-rate band (0.8–3.5 Hz, so a band-pass cannot
/// remove them) under a raised-cosine envelope, `amplitude` times the pulse height at its middle.
public struct MotionArtefact: Sendable, Equatable {
    public var start: Double
    public var duration: Double
    public var amplitude: Double

    public init(start: Double, duration: Double, amplitude: Double) {
        self.start = start
        self.duration = duration
        self.amplitude = amplitude
    }

    public func contains(_ seconds: Double) -> Bool { seconds >= start && seconds <= start + duration }

    fileprivate func value(at t: Double, waves: [ArtefactWave]) -> Double {
        guard duration > 0, contains(t) else { return 0 }
        let envelope = 0.5 - 0.5 * cos(2 * .pi * (t - start) / duration)
        let sum = waves.reduce(0) { $0 + $1.weight * sin(2 * .pi * $1.hertz * t + $1.phase) }
        return amplitude * envelope * sum
    }
}

private struct ArtefactWave: Sendable, Equatable {
    var hertz: Double
    var phase: Double
    var weight: Double
}
