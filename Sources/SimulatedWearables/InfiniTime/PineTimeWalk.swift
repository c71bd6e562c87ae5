import Foundation
import Wearables

/// What a PineTime's accelerometer and pedometer see on a walking wrist: pure and seeded, so the same seed and
/// the same sampling give the same values.
///
/// *Modeled*, not measured: gravity mostly along the watch's −z (the face up on a swinging forearm), the arm's swing
/// at half the step frequency on y, a heel strike on x and z at the step frequency, and a little noise, in the
/// BMA421's counts (1024 per g, `InfiniTimeMotionValues`). Steps accrue at `cadence` steps a minute; standing
/// (`cadence` 0) leaves gravity and noise.
struct PineTimeWalk: Sendable {
    /// Steps per minute; 0 stands still.
    let cadence: Double
    private(set) var steps: UInt32
    private var fractionalSteps = 0.0
    private var seconds = 0.0
    private var random: SimulationRandom

    init(cadence: Double, steps: UInt32, seed: UInt64) {
        self.cadence = cadence
        self.steps = steps
        random = SimulationRandom(seed: seed)
    }

    /// Advances `elapsed` seconds; true when the step count changed (the watch notifies it).
    mutating func advance(by elapsed: Double) -> Bool {
        seconds += elapsed
        fractionalSteps += cadence / 60 * elapsed
        let whole = fractionalSteps.rounded(.down)
        guard whole >= 1 else { return false }
        fractionalSteps -= whole
        steps = steps &+ UInt32(whole)
        return true
    }

    /// The acceleration now.
    mutating func motion() -> InfiniTimeMotionValues {
        let g = InfiniTimeMotionValues.countsPerG
        let stepHz = cadence / 60
        let phase = 2 * Double.pi * stepHz * seconds
        let walking = cadence > 0 ? 1.0 : 0.0
        let x = walking * 0.18 * g * sin(phase) + noise()
        let y = walking * 0.30 * g * sin(phase / 2) + 0.1 * g + noise()
        let z = -g + walking * 0.25 * g * abs(sin(phase)) + noise()
        return InfiniTimeMotionValues(x: Self.counts(x), y: Self.counts(y), z: Self.counts(z))
    }

    private mutating func noise() -> Double { Double.random(in: -12...12, using: &random) }

    private static func counts(_ value: Double) -> Int16 { Int16(max(-32768, min(32767, value.rounded()))) }
}
