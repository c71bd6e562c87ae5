import Wearables

/// A seeded random number generator (SplitMix64), so a simulated device given the same seed produces the same
/// values in the same order on every run and every machine. Not for anything that needs real randomness.
public struct SimulationRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A seed for a sub-generator, so each part of a device draws from its own stream and adding a draw in one
    /// part does not shift the values of another.
    public mutating func split() -> SimulationRandom { SimulationRandom(seed: next()) }

    /// A seed derived from text (a device address), stable across runs, unlike `Hasher`.
    public static func seed(from text: String, base: UInt64) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ base
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }
}

/// A value that wanders slowly and stays plausible: each step moves it a little at random and pulls it back
/// towards a target, within hard limits. Heart rate, temperature, SpO2 and RSSI all move like this.
public struct SlowlyVaryingValue: Sendable, Equatable {
    public private(set) var value: Double
    public var target: Double
    /// The largest random move per step.
    public let step: Double
    /// How strongly each step pulls back towards `target`, 0…1.
    public let pull: Double
    public let limits: ClosedRange<Double>

    public init(start: Double, target: Double? = nil, step: Double, pull: Double = 0.05, limits: ClosedRange<Double>) {
        value = min(max(start, limits.lowerBound), limits.upperBound)
        self.target = target ?? start
        self.step = step
        self.pull = pull
        self.limits = limits
    }

    @discardableResult
    public mutating func advance(using random: inout SimulationRandom) -> Double {
        let jitter = step == 0 ? 0 : Double.random(in: -step...step, using: &random)
        let next = value + pull * (target - value) + jitter
        value = min(max(next, limits.lowerBound), limits.upperBound)
        return value
    }
}
