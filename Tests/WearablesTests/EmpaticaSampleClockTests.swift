import Testing

@testable import Wearables

@Suite("E4 sample clock")
struct EmpaticaSampleClockTests {
    static let start: Int64 = 1_795_298_704_000

    @Test("an hour of packets ends an hour after the start, with no drift", arguments: E4Stream.allCases)
    func oneHour(stream: E4Stream) {
        var clock = E4SampleClock(startUnixMilliseconds: Self.start, stream: stream)
        let samplesInAnHour = stream.samplesPerSecond * 3600
        // EDA counters start near the top so that they wrap during the hour.
        var counter: UInt16 = 65_000
        var times: [Int64] = []
        while times.count <= samplesInAnHour {
            times += clock.timestamps(ofPacketWithCounter: stream.hasPacketCounter ? counter : nil)
            counter &+= 1
        }
        #expect(abs(times[samplesInAnHour] - (Self.start + 3_600_000)) <= 1)
        let period = 1000 / Double(stream.samplesPerSecond)
        #expect(abs(Double(times[samplesInAnHour - 1] - Self.start) - (3_600_000 - period)) <= 1)
        // Every step is the period rounded one way or the other: nothing was skipped or bunched up.
        let steps = Set(zip(times.dropFirst(), times).map { $0 - $1 })
        #expect(steps.isSubset(of: [Int64(period.rounded(.down)), Int64(period.rounded(.up))]))
        #expect(clock.lostPackets == 0 && clock.counterDiscontinuities == 0)
    }

    @Test("BVP samples are 15.625 ms apart, rounded to the nearest millisecond")
    func bvpSpacing() {
        var clock = E4SampleClock(startUnixMilliseconds: Self.start, stream: .bvp)
        #expect(clock.timestamps().map { $0 - Self.start } == [0, 16, 31, 47, 63, 78, 94, 109, 125, 141, 156])
        #expect(clock.timestamps().first.map { $0 - Self.start } == 172)
    }

    @Test("accelerometer packets of varying size are timed by the samples they held: 31.25 ms apart at 32 Hz")
    func variableSamplesPerPacket() {
        var clock = E4SampleClock(startUnixMilliseconds: Self.start, stream: .accelerometer)
        // Packets of 18, 20, 21, 24 and 18 bytes: 6, 6, 7, 8 and 6 whole triplets.
        let counts = [6, 6, 7, 8, 6]
        var times: [Int64] = []
        for count in counts {
            let packet = clock.timestamps(ofSamples: count)
            #expect(packet.count == count)
            times += packet
        }
        // Sample n is at round(n × 31.25) ms whatever packet carried it: no gap, no overlap between packets.
        #expect(times.map { $0 - Self.start } == (0..<33).map { Int64((Double($0) * 31.25).rounded(.toNearestOrAwayFromZero)) })
        #expect(clock.nextSampleIndex == 33)
        #expect(clock.timestamps(ofSamples: 0).isEmpty && clock.nextSampleIndex == 33)

        // An hour of 7-triplet packets (21 bytes) ends an hour after the start, as the nominal six-triplet ones do.
        var hour = E4SampleClock(startUnixMilliseconds: Self.start, stream: .accelerometer)
        var hourTimes: [Int64] = []
        while hourTimes.count <= 32 * 3600 { hourTimes += hour.timestamps(ofSamples: 7) }
        #expect(hourTimes[32 * 3600] == Self.start + 3_600_000)
        #expect(Set(zip(hourTimes.dropFirst(), hourTimes).map { $0 - $1 }) == [31, 32])
    }

    @Test("a gap in the EDA counter means lost packets, and their time is skipped")
    func lostPackets() {
        var clock = E4SampleClock(startUnixMilliseconds: Self.start, stream: .eda)
        #expect(clock.timestamps(ofPacketWithCounter: 10).first == Self.start)
        #expect(clock.timestamps(ofPacketWithCounter: 11).first == Self.start + 1_500)
        // 12 and 13 never arrived: 14 starts four packets (24 samples at 4 Hz) after the start.
        #expect(clock.timestamps(ofPacketWithCounter: 14) == [6_000, 6_250, 6_500, 6_750, 7_000, 7_250].map {
            Self.start + $0
        })
        #expect(clock.lostPackets == 2)
    }

    @Test("the counter wraps from 65535 to 0 without a gap, and a loss across the wrap is still a loss")
    func counterWrap() {
        var clock = E4SampleClock(startUnixMilliseconds: Self.start, stream: .eda)
        let firsts = [65_534, 65_535, 0, 1].map { clock.timestamps(ofPacketWithCounter: $0).first }
        #expect(firsts == [0, 1_500, 3_000, 4_500].map { Self.start + $0 })
        #expect(clock.lostPackets == 0)

        var lossy = E4SampleClock(startUnixMilliseconds: Self.start, stream: .eda)
        _ = lossy.timestamps(ofPacketWithCounter: 65_535)
        #expect(lossy.timestamps(ofPacketWithCounter: 1).first == Self.start + 3_000)
        #expect(lossy.lostPackets == 1)
    }

    @Test("a repeated, backwards or implausibly large counter step does not move time", arguments: [5, 4, 5 + 1000])
    func discontinuity(next: Int) {
        var clock = E4SampleClock(startUnixMilliseconds: Self.start, stream: .eda)
        _ = clock.timestamps(ofPacketWithCounter: 5)
        #expect(clock.timestamps(ofPacketWithCounter: UInt16(next)).first == Self.start + 1_500)
        #expect(clock.lostPackets == 0)
        #expect(clock.counterDiscontinuities == 1)
        // The new counter value is the reference from now on.
        #expect(clock.timestamps(ofPacketWithCounter: UInt16(next + 1)).first == Self.start + 3_000)
        #expect(clock.counterDiscontinuities == 1)
    }
}
