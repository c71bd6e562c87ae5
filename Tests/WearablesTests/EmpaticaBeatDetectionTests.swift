import Foundation
import Testing

@testable import Wearables
@testable import SimulatedWearables

/// The beat detector against synthetic PPG whose true beat times are known. Everything is seeded and timed by
/// sample count, never by the wall clock, so every run sees the same numbers.
@Suite("E4 beat detection")
struct EmpaticaBeatDetectionTests {
    static let start: Int64 = 1_795_298_704_000
    static let warmUpEnd = start + 20_000

    enum Scenario: String, CaseIterable, Sendable {
        case resting, rampWithNoise, motionArtefacts, tachycardia, bradycardia

        var configuration: SyntheticPPG.Configuration {
            switch self {
            case .resting:
                SyntheticPPG.Configuration(heartRate: HeartRateSchedule(bpm: 70))
            case .rampWithNoise:
                SyntheticPPG.Configuration(
                    heartRate: HeartRateSchedule([.init(seconds: 0, bpm: 60), .init(seconds: 150, bpm: 120),
                                                  .init(seconds: 300, bpm: 75)]),
                    noise: 0.1)
            case .motionArtefacts:
                SyntheticPPG.Configuration(
                    heartRate: HeartRateSchedule([.init(seconds: 0, bpm: 65), .init(seconds: 300, bpm: 95)]),
                    noise: 0.1,
                    motionArtefacts: [MotionArtefact(start: 60, duration: 8, amplitude: 4),
                                      MotionArtefact(start: 150, duration: 5, amplitude: 6),
                                      MotionArtefact(start: 220, duration: 12, amplitude: 3)])
            case .tachycardia:
                // Beat-to-beat variability shrinks as the rate rises; 1 % is generous at 160 bpm.
                SyntheticPPG.Configuration(heartRate: HeartRateSchedule(bpm: 160), beatToBeatVariability: 0.01,
                                           noise: 0.05)
            case .bradycardia:
                SyntheticPPG.Configuration(heartRate: HeartRateSchedule(bpm: 45), noise: 0.05)
            }
        }
    }

    @Test("on synthetic PPG the intervals are within 20 ms (median) and the heart rate within 3 bpm of the truth",
          arguments: Scenario.allCases, [1, 2] as [UInt64])
    func accuracy(scenario: Scenario, seed: UInt64) {
        let run = BeatRun(configuration: scenario.configuration, seed: seed, seconds: 300)
        #expect(run.events.count >= run.expectedBeats * 9 / 10, "found \(run.events.count) of \(run.expectedBeats)")
        #expect(run.unmatched * 50 <= run.events.count, "\(run.unmatched) beats matched no true beat")
        #expect(BeatRun.median(run.intervalErrors) < 20, "median interval error \(BeatRun.median(run.intervalErrors)) ms")
        let worst = run.heartRateErrors.max() ?? .infinity
        #expect(worst <= 3, "heart rate up to \(worst) bpm from the truth")
        #expect(run.events.allSatisfy { $0.timestamp >= Self.warmUpEnd })
    }

    @Test("the same holds through the wire: PPG → BVP packets → bytes → decoded deltas → sample clock → detector")
    func throughTheWire() throws {
        let configuration = Scenario.motionArtefacts.configuration
        var ppg = SyntheticPPG(configuration: configuration, seed: 7)
        var encoder = E4BVPDeltaEncoder()
        var decoder = E4BVPDeltaDecoder()
        var clock = E4SampleClock(startUnixMilliseconds: Self.start, stream: .bvp)
        var detector = PulseBeatDetector()
        var trueBeats: [Double] = []
        var events: [BeatEvent] = []
        for _ in 0..<(300 * 64) {
            let sample = ppg.next()
            if let beat = sample.beat { trueBeats.append(Double(Self.start) + beat * 1000) }
            guard let packet = encoder.append(sample.value) else { continue }
            let decoded = try E4BVPPacket.decode(packet.encode())
            for (value, time) in zip(decoder.decode(decoded), clock.timestamps()) {
                events += detector.process(sample: value, timestamp: time)
            }
        }
        let run = BeatRun(events: events, trueBeats: trueBeats, configuration: configuration)
        #expect(run.events.count >= run.expectedBeats * 9 / 10, "found \(run.events.count) of \(run.expectedBeats)")
        #expect(BeatRun.median(run.intervalErrors) < 20)
        #expect((run.heartRateErrors.max() ?? .infinity) <= 3)
    }

    @Test("nothing is emitted during the first 20 s, and it is the warm-up that holds the beats back")
    func warmUp() {
        let withWarmUp = BeatRun(configuration: Scenario.resting.configuration, seed: 3, seconds: 40)
        #expect(!withWarmUp.events.isEmpty)
        #expect(withWarmUp.events.allSatisfy { $0.timestamp >= Self.warmUpEnd })

        let without = BeatRun(configuration: Scenario.resting.configuration, seed: 3, seconds: 40,
                              detector: PulseBeatDetector.Configuration(warmUpMilliseconds: 0))
        #expect(without.events.contains { $0.timestamp < Self.start + 10_000 })
    }

    @Test("a constant signal gives no beats")
    func constant() {
        var detector = PulseBeatDetector()
        let events = (0..<(300 * 64)).flatMap { index in
            detector.process(sample: 512, timestamp: Self.start + Int64(index) * 1000 / 64)
        }
        #expect(events.isEmpty)
    }

    @Test("sensor-level noise on a flat signal gives no beats", arguments: [1, 2, 3] as [UInt64])
    func tinyNoise(seed: UInt64) {
        var detector = PulseBeatDetector()
        let events = Self.noise(seed: seed, standardDeviation: 0.2, seconds: 300).enumerated().flatMap { index, value in
            detector.process(sample: 512 + value, timestamp: Self.start + Int64(index) * 1000 / 64)
        }
        #expect(events.isEmpty)
    }

    @Test("noise as large as a pulse gives no beats, because it is not periodic", arguments: [1, 2, 3] as [UInt64])
    func pulseSizedNoise(seed: UInt64) {
        let noise = Self.noise(seed: seed, standardDeviation: 30, seconds: 600)
        func beats(_ configuration: PulseBeatDetector.Configuration) -> Int {
            var detector = PulseBeatDetector(configuration: configuration)
            return noise.enumerated().reduce(0) { count, sample in
                count + detector.process(sample: sample.element,
                                         timestamp: Self.start + Int64(sample.offset) * 1000 / 64).count
            }
        }
        #expect(beats(PulseBeatDetector.Configuration()) == 0)
        // Without the periodicity check the same noise does produce "beats": the check is what rejects it.
        #expect(beats(PulseBeatDetector.Configuration(minimumPeriodicity: -2)) > 50)
    }

    @Test("beats stop within two seconds of the pulse going flat", arguments: [1, 2] as [UInt64])
    func pulseStops(seed: UInt64) {
        var ppg = SyntheticPPG(configuration: SyntheticPPG.Configuration(noise: 0.05), seed: seed)
        var detector = PulseBeatDetector()
        var events: [BeatEvent] = []
        for index in 0..<(120 * 64) {
            let value = index < 60 * 64 ? ppg.next().value : 0
            events += detector.process(sample: value, timestamp: Self.start + Int64(index) * 1000 / 64)
        }
        #expect(events.contains { $0.timestamp > Self.start + 50_000 })
        #expect(!events.contains { $0.timestamp > Self.start + 62_000 })
    }

    /// White Gaussian noise from a seeded generator.
    static func noise(seed: UInt64, standardDeviation: Double, seconds: Int) -> [Double] {
        var random = SimulationRandom(seed: seed)
        return (0..<(seconds * 64)).map { _ in
            let u = Double.random(in: Double.ulpOfOne..<1, using: &random)
            let v = Double.random(in: 0..<1, using: &random)
            return standardDeviation * (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
        }
    }
}

/// Detected beats scored against the true beats of the synthetic PPG they came from.
///
/// Detected beat times sit a steady few tens of ms from the true systolic peaks (the filters' delay), so each
/// event is matched to the true beat nearest to it after removing the median of that offset; an event more than
/// 100 ms from every true beat is unmatched. The interval error compares the event's interval with the true
/// interval ending at its beat. The heart-rate error compares with the rate a perfect detector would report:
/// 60 / the median of the same number of true intervals ending there.
struct BeatRun {
    let events: [BeatEvent]
    /// True beats after the warm-up and outside motion artefacts: what a detector should find.
    let expectedBeats: Int
    private(set) var intervalErrors: [Double] = []  // ms
    private(set) var heartRateErrors: [Double] = []  // bpm
    private(set) var unmatched = 0

    init(configuration: SyntheticPPG.Configuration, seed: UInt64, seconds: Int,
         detector detectorConfiguration: PulseBeatDetector.Configuration = .init()) {
        var ppg = SyntheticPPG(configuration: configuration, seed: seed)
        var detector = PulseBeatDetector(configuration: detectorConfiguration)
        let clock = E4SampleClock(startUnixMilliseconds: EmpaticaBeatDetectionTests.start, stream: .bvp)
        var trueBeats: [Double] = []
        var events: [BeatEvent] = []
        for index in 0..<(seconds * configuration.samplesPerSecond) {
            let sample = ppg.next()
            if let beat = sample.beat { trueBeats.append(Double(EmpaticaBeatDetectionTests.start) + beat * 1000) }
            events += detector.process(sample: sample.value, timestamp: clock.timestamp(ofSample: Int64(index)))
        }
        self.init(events: events, trueBeats: trueBeats, configuration: configuration)
    }

    init(events: [BeatEvent], trueBeats: [Double], configuration: SyntheticPPG.Configuration) {
        self.events = events
        let start = Double(EmpaticaBeatDetectionTests.start)
        expectedBeats = trueBeats.filter { time in
            time >= Double(EmpaticaBeatDetectionTests.warmUpEnd)
                && !configuration.motionArtefacts.contains { $0.contains((time - start) / 1000) }
        }.count
        func nearest(to time: Double) -> Int? {
            trueBeats.indices.min { abs(trueBeats[$0] - time) < abs(trueBeats[$1] - time) }
        }
        let lag = Self.median(events.compactMap { event in
            nearest(to: Double(event.timestamp)).map { Double(event.timestamp) - trueBeats[$0] }
        })
        for event in events {
            let time = Double(event.timestamp) - lag
            guard let index = nearest(to: time), index > 0, abs(trueBeats[index] - time) <= 100 else {
                unmatched += 1
                continue
            }
            let trueIntervals = (max(1, index - 7)...index).map { (trueBeats[$0] - trueBeats[$0 - 1]) / 1000 }
            intervalErrors.append(abs(event.interval - trueIntervals[trueIntervals.count - 1]) * 1000)
            heartRateErrors.append(abs(event.heartRate - 60 / Self.median(trueIntervals)))
        }
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
