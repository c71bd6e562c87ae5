import Foundation
import Wearables

/// Skin conductance at the wrist, in µS, one sample per call at 4 Hz: a tonic level that wanders slowly around
/// `level` (typically by ±5 %, at most ±30 %), plus skin conductance responses — the phasic bumps sympathetic
/// arousal causes — at random moments (on average every 30 s at rest, every 15 s walking), each 0.02–0.15 × the
/// level high, rising with a 0.75 s and falling with a 4 s time constant (the bi-exponential shape of the EDA
/// literature). Pure and seeded.
///
/// What it does not model: electrode contact changes, a band taken off the wrist (conductance near 0), sweating
/// from heat or exercise beyond the response rate.
struct E4SkinConductance: Sendable {
    static let samplesPerSecond = 4.0
    static let riseSeconds = 0.75
    static let decaySeconds = 4.0
    /// Where the bi-exponential peaks and its height there, to scale responses to their amplitude.
    static let peakTime = log(decaySeconds / riseSeconds) * decaySeconds * riseSeconds / (decaySeconds - riseSeconds)
    static let peakValue = exp(-peakTime / decaySeconds) - exp(-peakTime / riseSeconds)

    let level: Double
    let meanSecondsBetweenResponses: Double
    private var random: SimulationRandom
    private var tonic: SlowlyVaryingValue
    private var responses: [(onset: Double, amplitude: Double)] = []
    private var nextResponse: Double
    private var index = 0

    init(level: Double, activity: E4WristActivity, seed: UInt64) {
        self.level = level
        meanSecondsBetweenResponses = activity == .walk ? 15 : 30
        random = SimulationRandom(seed: seed)
        tonic = SlowlyVaryingValue(start: level, step: level * 0.004, pull: 0.001,
                                   limits: (level * 0.7)...(level * 1.3))
        nextResponse = 0
        nextResponse = drawInterval()
    }

    mutating func next() -> Double {
        let time = Double(index) / Self.samplesPerSecond
        index += 1
        while time >= nextResponse {
            responses.append((nextResponse, level * Double.random(in: 0.02...0.15, using: &random)))
            nextResponse += drawInterval()
        }
        responses.removeAll { time - $0.onset > 40 }
        var value = tonic.advance(using: &random)
        for response in responses {
            let age = time - response.onset
            let shape = exp(-age / Self.decaySeconds) - exp(-age / Self.riseSeconds)
            value += response.amplitude * shape / Self.peakValue
        }
        return value
    }

    /// Exponentially distributed (a Poisson process), at least 3 s.
    private mutating func drawInterval() -> Double {
        let u = Double.random(in: Double.ulpOfOne..<1, using: &random)
        return max(3, -log(u) * meanSecondsBetweenResponses)
    }
}

/// Skin temperature at the wrist, in °C, one sample per call at 4 Hz: `level` with a slow random wander of a few
/// tenths of a degree (at most ±1.5 °C). Wrist skin sits a few degrees below core temperature; 33 °C is typical
/// indoors. Pure and seeded. What it does not model: the slow warm-up after the band is put on.
struct E4SkinTemperature: Sendable {
    private var random: SimulationRandom
    private var value: SlowlyVaryingValue

    init(level: Double, seed: UInt64) {
        random = SimulationRandom(seed: seed)
        value = SlowlyVaryingValue(start: level, step: 0.01, pull: 0.0005, limits: (level - 1.5)...(level + 1.5))
    }

    mutating func next() -> Double { value.advance(using: &random) }
}
