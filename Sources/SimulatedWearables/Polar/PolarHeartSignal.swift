import Foundation
import Wearables

/// The heart a simulated Polar sensor measures: beats at a known mean rate with a few percent of beat-to-beat
/// variation, the ECG they draw (a PQRST complex per beat), the optical pulse a PPG sees, and the RR and PPI
/// intervals between them. Pure and seeded: the same seed gives the same beats; times are seconds since the
/// connection began.
struct PolarHeartSignal: Sendable {
    let meanBPM: Double
    /// The largest relative change of one interval from the mean (0.03: ±3 %).
    let variation: Double
    private var random: SimulationRandom
    /// Beat times in seconds, oldest first; kept from a little before the oldest time still asked for.
    private(set) var beats: [Double] = []

    init(meanBPM: Double, variation: Double, seed: UInt64) {
        self.meanBPM = meanBPM
        self.variation = variation
        random = SimulationRandom(seed: seed)
        beats = [0.3]
    }

    var meanInterval: Double { 60 / meanBPM }

    /// Makes sure the beats reach past `time`, and forgets those long before `oldest`.
    mutating func extend(through time: Double, keepingFrom oldest: Double) {
        while let last = beats.last, last <= time + 2 {
            beats.append(last + meanInterval * Double.random(in: (1 - variation)...(1 + variation), using: &random))
        }
        let firstKept = beats.firstIndex { $0 >= oldest - 3 } ?? 0
        if firstKept > 64 { beats.removeFirst(firstKept) }
    }

    /// The beats in `(after, through]`, each with the interval that ends at it (nil for the very first beat).
    func beats(after start: Double, through end: Double) -> [(time: Double, interval: Double)] {
        var result: [(time: Double, interval: Double)] = []
        for index in beats.indices where beats[index] > start && beats[index] <= end && index > 0 {
            result.append((beats[index], beats[index] - beats[index - 1]))
        }
        return result
    }

    /// The ECG in µV at `time`: P, Q, R, S and T waves of the beats around it (Gaussian bumps; the R peak about
    /// 1.2 mV, as a chest lead shows).
    func ecgMicrovolts(at time: Double) -> Int32 {
        let waves: [(offset: Double, amplitude: Double, width: Double)] = [
            (-0.20, 120, 0.025), (-0.035, -100, 0.010), (0, 1200, 0.011), (0.035, -250, 0.011), (0.25, 300, 0.045),
        ]
        var value = 0.0
        for beat in nearbyBeats(time) {
            for wave in waves {
                let distance = time - (beat + wave.offset)
                value += wave.amplitude * exp(-distance * distance / (2 * wave.width * wave.width))
            }
        }
        return Int32(value.rounded())
    }

    /// The optical pulse at `time` (0…1): a fast systolic rise after each beat, a slower fall and a dicrotic notch.
    func pulse(at time: Double) -> Double {
        guard let beat = beats.last(where: { $0 <= time }) else { return 0 }
        let phase = (time - beat) / meanInterval
        let rise = 0.12
        if phase < rise { return sin(phase / rise * .pi / 2) }
        let fall = exp(-(phase - rise) * 3.2)
        return fall + 0.08 * exp(-pow((phase - 0.45) / 0.05, 2))
    }

    private func nearbyBeats(_ time: Double) -> [Double] {
        guard let index = beats.firstIndex(where: { $0 > time }) else { return beats.suffix(1) }
        return Array(beats[max(0, index - 1)...min(beats.count - 1, index)])
    }
}

/// Walking, as a sensor on the chest or upper arm feels it: about 1.8 steps a second, gravity on the z axis,
/// a sway of the body left and right at half the step rate, and the earth's field turning slowly with the body.
/// Pure: a function of the time since the connection began.
struct PolarWalkingMotion: Sendable {
    let stepsPerSecond = 1.8

    /// Milli-g.
    func acceleration(at time: Double) -> (x: Int32, y: Int32, z: Int32) {
        let step = 2 * Double.pi * stepsPerSecond * time
        let x = 120 * sin(step / 2)
        let y = 180 * sin(step + 0.6)
        let z = -1000 + 260 * sin(step) + 40 * sin(3 * step)
        return (Int32(x.rounded()), Int32(y.rounded()), Int32(z.rounded()))
    }

    /// Degrees per second.
    func rotation(at time: Double) -> (x: Double, y: Double, z: Double) {
        let step = 2 * Double.pi * stepsPerSecond * time
        return (25 * cos(step / 2), 12 * sin(step), 8 * sin(step / 2 + 1))
    }

    /// Gauss: a 0.5 G field whose direction turns 20° either way as the walker sways.
    func field(at time: Double) -> (x: Double, y: Double, z: Double) {
        let heading = 0.35 * sin(2 * Double.pi * stepsPerSecond / 2 * time)
        return (0.2 * cos(heading), 0.2 * sin(heading), -0.45)
    }
}
