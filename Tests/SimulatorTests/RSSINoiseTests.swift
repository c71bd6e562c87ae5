import DBus
import Simulator
import Testing
import Wear2MQTTTesting

/// `SetRSSINoise`: each advertisement heard at the device's level ± uniform noise from a seeded stream, so a test of
/// what a gateway makes of a noisy signal (roaming's flapping test) hears the same levels on every run.
@Suite
struct RSSINoiseTests {
    static let strap = SimulatorHarness.strap

    /// The offsets from `level` of the strap's next `count` advertisements after a fresh noise stream with `seed`,
    /// heard under discovery with a filter (every advertisement signals RSSI). Levels far from the last round's keep a
    /// late signal of that round out of this one.
    static func offsets(_ harness: SimulatorHarness, level: Int, seed: UInt64, count: Int = 25) async throws -> [Int] {
        let path = SimulatorHarness.devicePath(strap)
        try await harness.control.setRSSI(strap, level)
        try await harness.control.setRSSINoise(strap, amplitude: 6, seed: seed)
        let mark = harness.signals.mark
        try await harness.call(SimulatorHarness.adapter, "org.bluez.Adapter1", "StartDiscovery")
        var offsets: [Int] = []
        let heard = await harness.signals.until(timeout: .seconds(60)) {
            offsets = harness.signals.all.dropFirst(mark).compactMap { signal in
                signal.changes(path, "org.bluez.Device1")?["RSSI"]?.integerValue.map { Int($0) - level }
            }.filter { abs($0) <= 15 }
            return offsets.count >= count
        }
        try await harness.call(SimulatorHarness.adapter, "org.bluez.Adapter1", "StopDiscovery")
        #expect(heard, "\(offsets.count) advertisements heard")
        return Array(offsets.prefix(count))
    }

    @Test func eachAdvertisementIsHeardAroundTheLevelWithinTheAmplitudeAndTheSameSeedRepeatsTheLevels() async throws {
        try await SimulatorHarness.with { harness in
            try await harness.discover(Self.strap)
            let first = try await Self.offsets(harness, level: -90, seed: 7)
            #expect(first.allSatisfy { (-6...6).contains($0) }, "\(first)")
            // Wider than the built-in ±2 dB fading it replaces.
            #expect(first.min()! <= -4 && first.max()! >= 4, "\(first)")
            let again = try await Self.offsets(harness, level: -30, seed: 7)
            #expect(again == first)
            let otherSeed = try await Self.offsets(harness, level: -90, seed: 8)
            #expect(otherSeed != first)
        }
    }

    @Test func anAmplitudeBeyond40DecibelsIsRefusedAndZeroRestoresTheFading() async throws {
        try await SimulatorHarness.with { harness in
            await #expect(throws: BusError.remote(name: "org.wear2mqtt.Simulator.Error.InvalidArgument",
                                                  message: "41 dB is outside 0…40")) {
                try await harness.control.setRSSINoise(Self.strap, amplitude: 41, seed: 1)
            }
            try await harness.discover(Self.strap)
            try await harness.control.setRSSINoise(Self.strap, amplitude: 20, seed: 1)
            try await harness.control.setRSSINoise(Self.strap, amplitude: 0, seed: 1)
            let path = SimulatorHarness.devicePath(Self.strap)
            try await harness.control.setRSSI(Self.strap, -70)
            let mark = harness.signals.mark
            try await harness.call(SimulatorHarness.adapter, "org.bluez.Adapter1", "StartDiscovery")
            var levels: [Int] = []
            #expect(await harness.signals.until(timeout: .seconds(60)) {
                // Within 10 dB of the level: a late signal of the discovery before (at -55 dB) stays out.
                levels = harness.signals.all.dropFirst(mark).compactMap { $0.changes(path, "org.bluez.Device1")?["RSSI"]?.integerValue.map(Int.init) }
                    .filter { abs($0 + 70) <= 10 }
                return levels.count >= 20
            })
            try await harness.call(SimulatorHarness.adapter, "org.bluez.Adapter1", "StopDiscovery")
            #expect(levels.allSatisfy { (-72 ... -68).contains($0) }, "\(levels)")
        }
    }
}
