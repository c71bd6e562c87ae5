import Foundation
import Wearables

/// The E4's accelerometer on a wrist, in g, one sample per call at 32 Hz. Pure and seeded: the same seed and
/// activity give the same samples.
///
/// Axes are the EmpaLink SDK's: x towards the USB slot, y towards the shorter strap, z towards the bottom of the
/// device (the skin). The accelerometer measures specific force, so a still wrist reads 1 g pointing *up* — with
/// the device lying flat on the back of the wrist, palm down, that is (0, 0, −1) g — and the SDK says the values
/// "include the gravitational acceleration on each of the 3 axis".
///
/// - `rest`: the forearm lies on a desk or lap, tilted about 10° in pitch and 20° in roll; the posture drifts by
///   about half a degree and every 20–90 s shifts, over a second, to a new one within 8° of the first; a tremor
///   of 0.004 g, below the 1/64 g resolution, so the counts mostly stand still and flicker by one.
/// - `walk`: the arm hangs (x, assumed to lie along the forearm, carries most of gravity) and swings ±15° once
///   every two steps at a cadence of about 1.8 steps/s, with the tangential acceleration of a 0.55 m pendulum
///   along z (up to 0.5 g), a vertical bounce of 0.3 g at every step and 0.03 g of noise: about 0.7–1.4 g in
///   magnitude.
///
/// What it does not model: turning, gestures, the arm's rotation about the forearm during the swing, and the
/// accelerometer's own offset and gain errors.
struct E4WristMotion: Sendable {
    static let samplesPerSecond = 32.0

    let activity: E4WristActivity
    private var random: SimulationRandom
    private var pitch: SlowlyVaryingValue
    private var roll: SlowlyVaryingValue
    /// Steps per second while walking.
    private var cadence: SlowlyVaryingValue
    /// The arm swing's phase, in radians; a swing is two steps.
    private var swingPhase = 0.0
    /// Samples until the resting posture shifts, and the shift in progress.
    private var samplesToNextShift: Int
    private var shift: (from: (pitch: Double, roll: Double), to: (pitch: Double, roll: Double), progress: Int)?

    private static let shiftSamples = 32

    init(activity: E4WristActivity, seed: UInt64) {
        self.activity = activity
        var seeds = SimulationRandom(seed: seed)
        random = seeds.split()
        let pitch0 = activity == .walk ? -70.0 : 10.0
        let roll0 = activity == .walk ? 10.0 : 20.0
        pitch = SlowlyVaryingValue(start: pitch0, step: 0.05, pull: 0.002, limits: (pitch0 - 8)...(pitch0 + 8))
        roll = SlowlyVaryingValue(start: roll0, step: 0.05, pull: 0.002, limits: (roll0 - 8)...(roll0 + 8))
        cadence = SlowlyVaryingValue(start: 1.8, step: 0.002, pull: 0.01, limits: 1.6...2.0)
        samplesToNextShift = Int.random(in: 640...2880, using: &random)
        swingPhase = Double.random(in: 0..<(2 * .pi), using: &random)
    }

    /// The next sample, in g.
    mutating func next() -> (x: Double, y: Double, z: Double) {
        pitch.advance(using: &random)
        roll.advance(using: &random)
        switch activity {
        case .rest: return nextAtRest()
        case .walk: return nextWalking()
        }
    }

    private mutating func nextAtRest() -> (x: Double, y: Double, z: Double) {
        var angles = (pitch: pitch.value, roll: roll.value)
        if let current = shift {
            let fraction = Double(current.progress) / Double(Self.shiftSamples)
            let eased = 0.5 - 0.5 * cos(.pi * fraction)
            angles = (current.from.pitch + (current.to.pitch - current.from.pitch) * eased,
                      current.from.roll + (current.to.roll - current.from.roll) * eased)
            if current.progress >= Self.shiftSamples {
                shift = nil
                pitch = SlowlyVaryingValue(start: current.to.pitch, step: 0.05, pull: 0.002, limits: pitch.limits)
                roll = SlowlyVaryingValue(start: current.to.roll, step: 0.05, pull: 0.002, limits: roll.limits)
            } else {
                shift?.progress += 1
            }
        } else {
            samplesToNextShift -= 1
            if samplesToNextShift <= 0 {
                samplesToNextShift = Int.random(in: 640...2880, using: &random)
                let to = (pitch: Double.random(in: pitch.limits, using: &random),
                          roll: Double.random(in: roll.limits, using: &random))
                shift = (from: angles, to: to, progress: 1)
            }
        }
        let gravity = Self.gravity(pitchDegrees: angles.pitch, rollDegrees: angles.roll)
        return (gravity.x + tremor(0.004), gravity.y + tremor(0.004), gravity.z + tremor(0.004))
    }

    private mutating func nextWalking() -> (x: Double, y: Double, z: Double) {
        let stepRate = cadence.advance(using: &random)
        let swingRate = 2 * .pi * stepRate / 2
        swingPhase += swingRate / Self.samplesPerSecond
        if swingPhase > 2 * .pi { swingPhase -= 2 * .pi }
        let amplitude = 15.0 * .pi / 180
        let angle = amplitude * sin(swingPhase)
        let gravity = Self.gravity(pitchDegrees: pitch.value + angle * 180 / .pi, rollDegrees: roll.value)
        // Tangential acceleration of a pendulum of 0.55 m swinging by `angle`: −L·A·ω²·sin, in g.
        let tangential = -0.55 * amplitude * swingRate * swingRate * sin(swingPhase) / 9.80665
        // A bounce at every step (twice per swing) along the vertical, which is where gravity's reaction points.
        let bounce = 0.3 * cos(2 * swingPhase)
        return (gravity.x * (1 + bounce) + tremor(0.03),
                gravity.y * (1 + bounce) + tremor(0.03),
                gravity.z * (1 + bounce) + tangential + tremor(0.03))
    }

    /// Gravity's reaction in device axes, 1 g, for the device tilted by pitch (about y) and roll (about x) from
    /// lying flat with its bottom down.
    static func gravity(pitchDegrees: Double, rollDegrees: Double) -> (x: Double, y: Double, z: Double) {
        let pitch = pitchDegrees * .pi / 180
        let roll = rollDegrees * .pi / 180
        return (sin(pitch), -cos(pitch) * sin(roll), -cos(pitch) * cos(roll))
    }

    /// The nearest raw sample for a reading in g, clamped to what a signed byte holds (−2 … +1.98 g).
    static func sample(_ g: (x: Double, y: Double, z: Double)) -> E4AccelerometerPacket.Sample {
        func raw(_ value: Double) -> Int8 {
            let counts = (value * E4AccelerometerPacket.countsPerG).rounded()
            guard counts.isFinite else { return 0 }
            return Int8(min(max(counts, Double(Int8.min)), Double(Int8.max)))
        }
        return E4AccelerometerPacket.Sample(x: raw(g.x), y: raw(g.y), z: raw(g.z))
    }

    /// Gaussian noise of standard deviation `sigma` (Box–Muller).
    private mutating func tremor(_ sigma: Double) -> Double {
        let u = Double.random(in: Double.ulpOfOne..<1, using: &random)
        let v = Double.random(in: 0..<1, using: &random)
        return sigma * (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }
}
