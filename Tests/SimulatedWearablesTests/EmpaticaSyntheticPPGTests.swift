import Testing

@testable import Wearables
@testable import SimulatedWearables

@Suite("Synthetic PPG")
struct EmpaticaSyntheticPPGTests {
    @Test("the same seed gives the same samples and beats; another seed does not")
    func determinism() {
        var a = SyntheticPPG(configuration: .init(noise: 0.1), seed: 42)
        var b = SyntheticPPG(configuration: .init(noise: 0.1), seed: 42)
        var c = SyntheticPPG(configuration: .init(noise: 0.1), seed: 43)
        let first = a.next(64 * 30)
        #expect(first == b.next(64 * 30))
        #expect(first != c.next(64 * 30))
    }

    @Test("beats follow the heart-rate schedule", arguments: [45.0, 72.0, 150.0])
    func rate(bpm: Double) {
        var ppg = SyntheticPPG(configuration: .init(heartRate: HeartRateSchedule(bpm: bpm)), seed: 1)
        let beats = ppg.next(64 * 300).compactMap(\.beat)
        let meanInterval = (beats[beats.count - 1] - beats[0]) / Double(beats.count - 1)
        #expect(abs(meanInterval - 60 / bpm) < 0.01 * 60 / bpm, "mean interval \(meanInterval) s")
        let intervals = zip(beats.dropFirst(), beats).map { $0 - $1 }
        #expect(intervals.contains { $0 != intervals[0] }, "no beat-to-beat variability")
    }

    @Test("a ramp in the schedule is followed", arguments: [1, 2] as [UInt64])
    func ramp(seed: UInt64) {
        let schedule = HeartRateSchedule([.init(seconds: 0, bpm: 60), .init(seconds: 120, bpm: 120)])
        #expect(schedule.bpm(at: -5) == 60 && schedule.bpm(at: 60) == 90 && schedule.bpm(at: 500) == 120)
        var ppg = SyntheticPPG(configuration: .init(heartRate: schedule), seed: seed)
        let beats = ppg.next(64 * 180).compactMap(\.beat)
        let lastMinute = beats.filter { $0 >= 120 }
        let meanInterval = (lastMinute[lastMinute.count - 1] - lastMinute[0]) / Double(lastMinute.count - 1)
        #expect(abs(meanInterval - 0.5) < 0.01)
    }

    @Test("each pulse peaks near its beat and has a dicrotic notch before the diastolic wave")
    func pulseShape() throws {
        let configuration = SyntheticPPG.Configuration(heartRate: HeartRateSchedule(bpm: 60), beatToBeatVariability: 0,
                                                       baselineWander: 0)
        var ppg = SyntheticPPG(configuration: configuration, seed: 5)
        let samples = ppg.next(64 * 20)
        let values = samples.map(\.value)
        for beat in samples.compactMap(\.beat).dropFirst().dropLast(2) {
            let peak = Int((beat * 64).rounded())
            let pulse = Array(values[(peak - 8)...(peak + 40)])
            let top = try #require(pulse.indices.max { pulse[$0] < pulse[$1] }) - 8
            #expect(abs(top) <= 1, "pulse peaks \(top) samples from its beat")
            #expect(abs(values[peak] - 100) < 15, "pulse height \(values[peak])")
            // After the peak the wave falls to a notch (0.1–0.3 s later), then rises again to the diastolic wave.
            let window = (peak + 6)...(peak + 20)
            let notch = try #require(window.min { values[$0] < values[$1] })
            #expect(notch > window.lowerBound && notch < window.upperBound, "no notch after the beat at \(beat) s")
            #expect(try #require(values[notch...(peak + 28)].max()) > values[notch] + 3)
        }
    }

    @Test("a motion artefact swings several times as far as the pulse, only while it lasts")
    func motionArtefact() {
        let configuration = SyntheticPPG.Configuration(motionArtefacts: [MotionArtefact(start: 10, duration: 4,
                                                                                         amplitude: 5)])
        var ppg = SyntheticPPG(configuration: configuration, seed: 9)
        let values = ppg.next(64 * 20).map(\.value)
        let during = values[(64 * 11)..<(64 * 13)], before = values[..<(64 * 10)], after = values[(64 * 14)...]
        let swing = { (slice: ArraySlice<Double>) in (slice.max() ?? 0) - (slice.min() ?? 0) }
        #expect(swing(during) > 2 * swing(before))
        #expect(swing(after) < 1.5 * swing(before))
    }

    @Test("BVP deltas carry the wave to the host within half a count, and catch up after a slew-limited burst")
    func deltaCoding() throws {
        let configuration = SyntheticPPG.Configuration(noise: 0.05, motionArtefacts: [MotionArtefact(start: 20, duration: 3,
                                                                                                      amplitude: 12)])
        var ppg = SyntheticPPG(configuration: configuration, seed: 11)
        var encoder = E4BVPDeltaEncoder()
        var decoder = E4BVPDeltaDecoder()
        var sent: [Double] = []
        var received: [Double] = []
        for _ in 0..<(64 * 40) {
            let value = ppg.next().value
            sent.append(value)
            if let packet = encoder.append(value) {
                received += decoder.decode(try E4BVPPacket.decode(packet.encode()))
            }
        }
        let errors = zip(sent, received).map { abs($0 - $1) }
        #expect(errors[..<(64 * 20)].allSatisfy { $0 <= 0.5 })
        // The burst is steeper than 64 counts per sample, so the decoded wave lags it…
        #expect(errors[(64 * 20)..<(64 * 23)].contains { $0 > 10 })
        // …and is back within half a count soon after.
        #expect(errors[(64 * 25)...].allSatisfy { $0 <= 0.5 })
        #expect(decoder.redLevel != 0)
    }
}
