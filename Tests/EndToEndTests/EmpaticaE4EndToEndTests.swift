import Foundation
import Simulator
import Testing
import Wear2MQTTTesting
import Wearables
import SimulatedWearables

/// Three Empatica E4s streaming at once through the whole product: the simulator serves the reverse-engineered
/// protocol, the gateway's E4 driver starts each band, reconstructs sample times and detects beats from BVP.
@Suite(.timeLimit(.minutes(4)))
struct EmpaticaE4EndToEndTests {
    struct Band {
        let id: String
        let address: String
        let serial: String
        let bpm: Int
        var options: [String: SimulationOptionValue] {
            ["bpm": .int(bpm), "bpm_variation": .int(4), "bpm_period_s": .int(240), "serial": .string(serial)]
        }
    }

    static let bands = [
        Band(id: "e4_left", address: "E4:00:00:00:00:01", serial: "A0E401", bpm: 58),
        Band(id: "e4_right", address: "E4:00:00:00:00:02", serial: "A0E402", bpm: 76),
        Band(id: "e4_third", address: "E4:00:00:00:00:03", serial: "A0E403", bpm: 97),
    ]

    static var scenarioDevices: String {
        bands.map { band in """
          - kind: empatica_e4
            address: \(band.address)
            advertising_interval: 100ms
            options: { bpm: \(band.bpm), bpm_variation: 4, bpm_period_s: 240, serial: \(band.serial), motion: walk }
        """ }.joined(separator: "\n")
    }

    /// No driver named: the gateway picks `empatica` from the advertisement.
    static var configuredDevices: String {
        bands.map { "  - { address: \"\($0.address)\", name: \($0.id) }" }.joined(separator: "\n")
    }

    func samples(_ stack: Stack, _ topic: String) -> [[String: Any]] {
        stack.payloads(topic).compactMap(stack.json).filter { $0["ts"] != nil }
    }

    func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
    }

    @Test func threeBandsStreamTheirOwnDataAtTheirRatesWithTheirHeartRates() async throws {
        try await Stack.with(scenarioDevices: Self.scenarioDevices, configuredDevices: Self.configuredDevices) { stack in

            for band in Self.bands {
                #expect(await stack.until(timeout: .seconds(60)) { stack.payloads("\(band.id)/availability").last == #"{"state":"online"}"# },
                        "\(band.id) online")
            }
            #expect(stack.payloads("bridge/devices").last?.contains(#""driver":"empatica""#) == true)
            // Warm-up (~20 s) and then some beats on every band.
            for band in Self.bands {
                #expect(await stack.until(timeout: .seconds(75)) {
                    // The payloads first, at least as many: re-checked at each of 300 messages a second.
                    stack.payloads("\(band.id)/sensor/heart_rate").count >= 15 && samples(stack, "\(band.id)/sensor/heart_rate").count >= 15
                },
                        "\(band.id) heart rate after the warm-up")
            }
            let observed = Date()
            let counts = Dictionary(uniqueKeysWithValues: Self.bands.map { ($0.id, samples(stack, "\($0.id)/sensor/bvp").count) })
            // The window ends with 5 s of BVP at the nominal 64 Hz on every band: the rate is then the wall clock's
            // time for them.
            let payloads = Dictionary(uniqueKeysWithValues: Self.bands.map { ($0.id, stack.payloads("\($0.id)/sensor/bvp").count) })
            #expect(await stack.until(timeout: .seconds(30)) {
                Self.bands.allSatisfy { stack.payloads("\($0.id)/sensor/bvp").count >= payloads[$0.id]! + 64 * 5 }
            }, "5 s of BVP on every band")
            let elapsed = Date().timeIntervalSince(observed)

            for band in Self.bands {
                // Each band's state shows its own serial: topics are not crossed.
                let state = try #require(stack.payloads(band.id).last.flatMap(stack.json))
                #expect(state["serial"] as? String == band.serial)
                #expect(state["battery"] as? Int != nil)

                // Rates: BVP arrives at about 64 samples/s by the wall clock (loose: the machine is shared), and the
                // reconstructed times have not drifted from the wall clock after more than 30 s of streaming.
                let bvp = samples(stack, "\(band.id)/sensor/bvp")
                let perSecond = Double(bvp.count - (counts[band.id] ?? 0)) / elapsed
                // Half to double: a loaded machine delays and then catches up within 5 s; the exact rate is checked
                // on the reconstructed times below.
                #expect((32...128).contains(perSecond), "\(band.id): \(perSecond) BVP samples/s")
                let times = bvp.compactMap { $0["ts"] as? Int64 }
                #expect(times.count > 64 * 30, "\(band.id): more than 30 s of BVP")
                #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "\(band.id): BVP times increase")
                let lag = Int64(Date().timeIntervalSince1970 * 1000) - (times.last ?? 0)
                #expect((-1_000...3_000).contains(lag), "\(band.id): last BVP sample \(lag) ms behind the wall clock")
                let span = Double((times.last ?? 0) - (times.first ?? 0)) / 1000
                for (sensor, rate) in [("accelerometer", 32.0), ("eda", 4.0), ("skin_temperature", 4.0)] {
                    let count = Double(samples(stack, "\(band.id)/sensor/\(sensor)").count)
                    #expect(abs(count / span - rate) < rate * 0.15, "\(band.id) \(sensor): \(count / span) samples/s, expected \(rate)")
                }

                // Heart rate: the median of the last 10 s of detected rates against what the simulator generated then.
                let rates = samples(stack, "\(band.id)/sensor/heart_rate")
                let last = rates.compactMap { $0["ts"] as? Int64 }.max() ?? 0
                let recent = rates.filter { ($0["ts"] as? Int64 ?? 0) > last - 10_000 }
                let detected = median(recent.compactMap { ($0["bpm"] as? Int).map(Double.init) })
                let truth = median(try recent.compactMap { $0["ts"] as? Int64 }.map {
                    try SimulatedEmpaticaE4.trueHeartRate(atUnixSeconds: Double($0) / 1000, options: band.options)
                })
                #expect(abs(detected - truth) <= 3, "\(band.id): detected \(detected) bpm, generated \(truth) bpm")
                let intervals = samples(stack, "\(band.id)/sensor/ibi").compactMap { $0["seconds"] as? Double }
                #expect(!intervals.isEmpty && intervals.allSatisfy { (60 / 130...60 / 40).contains($0) }, "\(band.id) IBIs")
            }

            // The tag button of one band is an event of that band only.
            try await stack.control.raiseEvent(Self.bands[1].address, .buttonPress)
            #expect(await stack.until { stack.payloads("\(Self.bands[1].id)/event").contains { $0.contains(#""event":"tag""#) } })
            #expect(stack.payloads("\(Self.bands[0].id)/event").isEmpty && stack.payloads("\(Self.bands[2].id)/event").isEmpty)

            // disconnect keeps the band away (disconnecting → disconnected) until connect.
            let band = Self.bands[2]
            try await stack.request("\(band.id)/request/disconnect", #"{"transaction":"bye"}"#)
            #expect(await stack.until { stack.payloads("\(band.id)/availability").last == #"{"state":"offline"}"# })
            #expect(stack.payloads(band.id).contains { $0.contains(#""connection":"disconnecting""#) })
            // Away while the gateway carries 3 s more of another band's BVP, by that band's own sample times.
            func lastBVP() -> Int64? { stack.last("\(Self.bands[0].id)/sensor/bvp")?["ts"] as? Int64 }
            let away = try #require(lastBVP())
            #expect(await stack.until { (lastBVP() ?? 0) >= away + 3_000 }, "3 s of another band's samples")
            #expect(stack.payloads("\(band.id)/availability").last == #"{"state":"offline"}"#, "still away without connect")
            try await stack.request("\(band.id)/request/connect", #"{"transaction":"hello"}"#)
            #expect(await stack.until(timeout: .seconds(45)) { stack.payloads("\(band.id)/availability").last == #"{"state":"online"}"# })
        }
    }
}
