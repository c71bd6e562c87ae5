import Wearables

/// Everything the simulated E4 streams after one start command, as packets in the codecs' layouts, one packet per
/// call: the pure, steppable half of `SimulatedEmpaticaE4`, which only decides *when* to call it. Seeded: the same
/// settings, start time and seed give the same bytes, whenever and however fast they are asked for.
///
/// Time is the device's: sample *n* of a stream is at `startUnixSeconds + n / rate` (the stream's nominal rate,
/// `E4Stream`), exactly what the host's `E4SampleClock` assigns, so a sample's value and the time the gateway
/// stamps on it agree even when the packets are late.
///
/// - BVP (64 Hz, 11 samples a packet): `SyntheticPPG` at the heart rate of `settings.heartRate` (exact, see
///   `E4HeartRateWave`) with beat-to-beat variability (2 % of the interval, less above 75 bpm) and
///   `settings.ppgNoise`, encoded by `E4BVPDeltaEncoder`. The true beat times are kept (`takeTrueBeats()`). The
///   generator is restarted every 24 h of stream (a new seed, the same heart rate), which leaves a step the
///   detector rejects like a movement.
/// - Accelerometer (32 Hz, 6 samples): `E4WristMotion`.
/// - EDA (4 Hz, 6 samples): `E4SkinConductance`; the packet counter starts at 0 and adds 1 per packet.
/// - Skin temperature (4 Hz, 4 samples): `E4SkinTemperature`; the four metadata bytes are 0 (their meaning is
///   unknown).
///
/// What it does not model: motion artefacts in the PPG while walking (the PPG is clean apart from noise, so the
/// heart rate stays measurable), a band off the wrist, sensor saturation.
public struct E4SignalSource: Sendable {
    public let settings: E4SimulationSettings
    /// The time of every stream's first sample: the start command's.
    public let startUnixSeconds: UInt32
    public private(set) var bvpSamples: Int64 = 0
    public private(set) var accelerometerSamples: Int64 = 0
    public private(set) var edaSamples: Int64 = 0
    public private(set) var temperatureSamples: Int64 = 0
    /// The counter the next EDA packet carries.
    public private(set) var edaCounter: UInt16 = 0

    /// Seconds of BVP after which the pulse generator is restarted (its schedule covers one segment): 24 h.
    let segmentSeconds: Int
    /// True beats kept until taken, at most (about 18 minutes' worth at 220 bpm).
    static let keptBeats = 4096

    private var ppgSeeds: SimulationRandom
    private var ppg: SyntheticPPG
    private var segment = 0
    private var encoder = E4BVPDeltaEncoder()
    private var trueBeats: [Double] = []
    private var motion: E4WristMotion
    private var conductance: E4SkinConductance
    private var temperature: E4SkinTemperature

    public init(settings: E4SimulationSettings, startUnixSeconds: UInt32, seed: UInt64) {
        self.init(settings: settings, startUnixSeconds: startUnixSeconds, seed: seed, segmentSeconds: 86_400)
    }

    init(settings: E4SimulationSettings, startUnixSeconds: UInt32, seed: UInt64, segmentSeconds: Int) {
        self.settings = settings
        self.segmentSeconds = max(1, segmentSeconds)
        self.startUnixSeconds = startUnixSeconds
        var seeds = SimulationRandom(seed: seed)
        ppgSeeds = seeds.split()
        motion = E4WristMotion(activity: settings.activity, seed: seeds.next())
        conductance = E4SkinConductance(level: settings.skinConductance, activity: settings.activity, seed: seeds.next())
        temperature = E4SkinTemperature(level: settings.skinTemperature, seed: seeds.next())
        ppg = Self.pulse(settings: settings, fromUnixSeconds: Double(startUnixSeconds), seconds: self.segmentSeconds,
                         seed: ppgSeeds.next())
    }

    /// The Unix time, in seconds, of sample `index` of `stream` (0 is the first after the start command).
    public func unixSeconds(ofSample index: Int64, in stream: E4Stream) -> Double {
        Double(startUnixSeconds) + Double(index) / Double(stream.samplesPerSecond)
    }

    /// The true heart rate at the time of the last BVP sample sent (at the start before any).
    public var currentHeartRate: Double {
        settings.heartRate.bpm(atUnixSeconds: unixSeconds(ofSample: max(0, bvpSamples - 1), in: .bvp))
    }

    public func samples(of stream: E4Stream) -> Int64 {
        switch stream {
        case .bvp: bvpSamples
        case .accelerometer: accelerometerSamples
        case .eda: edaSamples
        case .temperature: temperatureSamples
        }
    }

    /// The next packet of `stream`, encoded as the codecs encode it.
    public mutating func nextPacket(_ stream: E4Stream) -> [UInt8] {
        switch stream {
        case .bvp: nextBVPPacket().encode()
        case .accelerometer: nextAccelerometerPacket()
        case .eda: nextEDAPacket()
        case .temperature: nextTemperaturePacket()
        }
    }

    public mutating func nextBVPPacket() -> E4BVPPacket {
        while true {
            if ppg.index >= segmentSeconds * E4Stream.bvp.samplesPerSecond {
                segment += 1
                let start = Double(startUnixSeconds) + Double(segment * segmentSeconds)
                ppg = Self.pulse(settings: settings, fromUnixSeconds: start, seconds: segmentSeconds, seed: ppgSeeds.next())
            }
            let segmentStart = Double(startUnixSeconds) + Double(segment * segmentSeconds)
            let sample = ppg.next()
            bvpSamples += 1
            if let beat = sample.beat {
                if trueBeats.count >= Self.keptBeats { trueBeats.removeFirst(trueBeats.count - Self.keptBeats + 1) }
                trueBeats.append(segmentStart + beat)
            }
            if let packet = encoder.append(sample.value) { return packet }
        }
    }

    /// The systolic peaks of the beats generated since the last call, in Unix seconds, oldest first (at most
    /// the last `keptBeats`).
    public mutating func takeTrueBeats() -> [Double] {
        defer { trueBeats.removeAll() }
        return trueBeats
    }

    // The three packets below always have their codec's sample count, within range, so their initialisers never
    // refuse them; the empty fallback is never sent (the same idiom as `SimulatedBattery.encoded`).

    private mutating func nextAccelerometerPacket() -> [UInt8] {
        let samples = (0..<E4AccelerometerPacket.samplesPerPacket).map { _ in E4WristMotion.sample(motion.next()) }
        accelerometerSamples += Int64(samples.count)
        return (try? E4AccelerometerPacket(samples: samples))?.encode() ?? []
    }

    private mutating func nextEDAPacket() -> [UInt8] {
        let raw = (0..<E4EDAPacket.samplesPerPacket).map { _ in E4EDAPacket.raw(ofMicrosiemens: conductance.next()) }
        edaSamples += Int64(raw.count)
        let counter = edaCounter
        edaCounter &+= 1
        return (try? E4EDAPacket(rawSamples: raw, counter: counter))?.encode() ?? []
    }

    private mutating func nextTemperaturePacket() -> [UInt8] {
        let raw = (0..<E4TemperaturePacket.samplesPerPacket).map { _ in
            E4TemperaturePacket.raw(ofCelsius: temperature.next())
        }
        temperatureSamples += Int64(raw.count)
        return (try? E4TemperaturePacket(rawSamples: raw))?.encode() ?? []
    }

    /// 2 % of the interval up to a resting rate of 75 bpm, less above (1 % at 150 bpm): heart-rate variability
    /// shrinks as the rate rises.
    static func beatToBeatVariability(_ heartRate: E4HeartRateWave) -> Double {
        0.02 * min(1, 75 / heartRate.restingBPM)
    }

    private static func pulse(settings: E4SimulationSettings, fromUnixSeconds start: Double, seconds: Int,
                              seed: UInt64) -> SyntheticPPG {
        // Two seconds beyond the segment: the generator draws beats up to a second ahead.
        let schedule = settings.heartRate.schedule(fromUnixSeconds: start, duration: Double(seconds + 2))
        let configuration = SyntheticPPG.Configuration(samplesPerSecond: E4Stream.bvp.samplesPerSecond,
                                                       heartRate: schedule,
                                                       beatToBeatVariability: beatToBeatVariability(settings.heartRate),
                                                       noise: settings.ppgNoise)
        return SyntheticPPG(configuration: configuration, seed: seed)
    }
}
