import SimulatedWearables

/// Signal noise set through the control interface (`SetRSSINoise`): every advertisement's level is the device's
/// level plus a uniform draw of ± `amplitude` dB from a stream of its own, so a run with the same seed hears the same
/// levels in the same order. It replaces the built-in ±2 dB fading, whose stream the scenario's seed fixes and which
/// is therefore the same in every simulator of a test that simulates one device in several rooms.
///
/// It does not model slow fading (a body between device and adapter for seconds): each advertisement draws anew.
struct RSSINoise: Sendable {
    /// The largest allowed amplitude: more than that is no longer "noise around a level".
    static let maximumAmplitude = 40

    let amplitude: Int
    private var random: SimulationRandom

    init(amplitude: Int, seed: UInt64) {
        self.amplitude = amplitude
        random = SimulationRandom(seed: seed)
    }

    /// The level one advertisement is heard at, around `level`.
    mutating func level(around level: Int) -> Int {
        level + Int.random(in: -amplitude ... amplitude, using: &random)
    }
}
