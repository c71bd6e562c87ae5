import Wearables

extension FuzzTarget {
    /// Empatica E4's packets (accelerometer, BVP, EDA, temperature, battery, tag, start command), the BVP delta
    /// decoder over a packet, and the sample clock over its sample count.
    static let empatica = FuzzTarget(
        name: "e4",
        summary: "Empatica E4: accelerometer, BVP (with delta decoding), EDA, temperature, battery, tag, start command"
    ) { bytes in
        checkStable(E4AccelerometerPacket.self, bytes)
        checkStable(E4BVPPacket.self, bytes)
        checkStable(E4EDAPacket.self, bytes)
        checkStable(E4TemperaturePacket.self, bytes)
        checkStable(E4BatteryLevel.self, bytes)
        checkStable(E4TagPress.self, bytes)
        checkStable(E4StartCommand.self, bytes)
        if let packet = try? E4BVPPacket.decode(bytes) {
            var decoder = E4BVPDeltaDecoder()
            let wave = decoder.decode(packet) + decoder.decode(packet)
            precondition(wave.allSatisfy(\.isFinite), "the BVP wave has a value that is not finite")
        }
        if let packet = try? E4AccelerometerPacket.decode(bytes) {
            var clock = E4SampleClock(startUnixMilliseconds: 1_700_000_000_000, samplesPerSecond: 32, samplesPerPacket: 6)
            let times = clock.timestamps(ofSamples: packet.samples.count)
            precondition(times.count == packet.samples.count && zip(times, times.dropFirst()).allSatisfy { $0 < $1 },
                         "sample times are not one per sample and increasing")
        }
    }
}
