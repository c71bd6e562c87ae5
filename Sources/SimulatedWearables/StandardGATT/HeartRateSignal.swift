import Wearables

/// The values a simulated heart-rate strap measures: a heart rate that drifts slowly around a resting value,
/// the beat-to-beat (RR) intervals that go with it, and the energy expended. Pure and seeded: the same seed and
/// the same sampling intervals give the same measurements.
///
/// The rate drifts once per simulated second whatever the sampling rate, so a 200 Hz benchmark stream and a
/// 1 Hz stream describe the same heart. RR intervals are reported when a beat completes, so most samples of a
/// fast stream carry none and a 1 Hz stream carries one or two, as real straps do.
struct HeartRateSignal: Sendable {
    struct Settings: Sendable, Equatable {
        var restingBPM: Double
        var contact: Bool?
        var reportsRRIntervals: Bool
        /// Energy expended goes into every tenth measurement, as the Heart Rate Service recommends for 1 Hz.
        var reportsEnergyExpended: Bool
    }

    let settings: Settings
    private var bpm: SlowlyVaryingValue
    private var random: SimulationRandom
    private var secondsSinceDrift = 0.0
    private var secondsIntoBeat = 0.0
    private var currentBeat: Double
    private var pendingRR: [UInt16] = []
    private var energyKJ = 0.0
    private var measurementCount = 0

    /// At most this many RR intervals go into one measurement: what fits a 23-byte ATT MTU next to a u8 heart
    /// rate and the energy field. The rest wait for the next measurement.
    static let maximumRRPerMeasurement = 8

    init(settings: Settings, seed: UInt64) {
        self.settings = settings
        random = SimulationRandom(seed: seed)
        bpm = SlowlyVaryingValue(start: settings.restingBPM, step: 1.5, pull: 0.08,
                                 limits: max(30, settings.restingBPM - 25)...min(220, settings.restingBPM + 35))
        currentBeat = 60 / settings.restingBPM
    }

    var currentBPM: Int { Int(bpm.value.rounded()) }

    /// Sets energy expended back to zero (a write of 0x01 to the Heart Rate Control Point).
    mutating func resetEnergyExpended() { energyKJ = 0 }

    /// The measurement sent `elapsed` seconds after the previous one. The rate and energy stay within what the
    /// codec accepts by construction; the error is only passed on.
    mutating func next(after elapsed: Double) throws(GATTCodecError) -> HeartRateMeasurement {
        secondsSinceDrift += elapsed
        while secondsSinceDrift >= 1 {
            secondsSinceDrift -= 1
            bpm.advance(using: &random)
        }
        energyKJ = min(65535, energyKJ + elapsed * bpm.value * 0.0012)
        secondsIntoBeat += elapsed
        while secondsIntoBeat >= currentBeat {
            secondsIntoBeat -= currentBeat
            if settings.reportsRRIntervals {
                pendingRR.append(UInt16(clamping: Int((currentBeat * 1024).rounded())))
            }
            // Beat-to-beat variability of a few percent, as a resting heart has.
            currentBeat = 60 / bpm.value * Double.random(in: 0.97...1.03, using: &random)
        }
        measurementCount += 1
        let rr = Array(pendingRR.prefix(Self.maximumRRPerMeasurement))
        pendingRR.removeFirst(rr.count)
        let energy = settings.reportsEnergyExpended && measurementCount % 10 == 1 ? Int(energyKJ) : nil
        return try HeartRateMeasurement(bpm: currentBPM, contact: settings.contact, energyExpendedKJ: energy,
                                        rawRRIntervals: rr)
    }
}
