import DBus
import Foundation
import Simulator
import Testing
import Wear2MQTTTesting

/// Issue 26 with real processes: one mosquitto, three gateways, each on its own private bus with its own
/// `wear2mqtt-sim` simulating the same strap at the level the room's adapter hears it, with the default roaming
/// settings (reports every 0.5 s, 6 dB for 4 s, 8 s to count a device gone). The wearer walks by changing the levels
/// through each simulator's control interface (`RoamingSite`). The times are printed as figures beside issue 26's
/// targets, not asserted: a speed target is the benchmark's to check, and a loaded machine must not fail a correct handover.
@Suite
struct RoamingEndToEndTests {
    @Test func theStrapFollowsTheWearerAndSurvivesItsOwnersDeath() async throws {
        try await RoamingSite.with(["kitchen": -55, "living": -80, "bedroom": -85]) { site in
            #expect(await site.until(timeout: .seconds(60)) { site.presence == "kitchen" },
                    "presence: \(site.payloads("strap/presence")); kitchen's log: \(site.rooms["kitchen"]!.gateway.child.errorOutput.suffix(3000))")
            #expect(await site.until(timeout: .seconds(30)) { site.payloads("strap/sensor/heart_rate").count >= 3 })

            // The wearer walks into the living room. (Before, the owners' history may begin with a gateway that heard
            // the strap first while the kitchen's discovery was still starting: the site corrects that as it would
            // for a walk. From here on every change of owner is counted.)
            let ownersBefore = site.owners.count
            #expect(site.owners.last == "kitchen")
            let walked = ContinuousClock.now
            try await site.walk(["kitchen": -85, "living": -55])
            // Requests all through the handover, to the strap and to the bridge: each answered once by the site.
            var sent = 0
            while site.presence != "living", ContinuousClock.now - walked < .seconds(60) {
                try await MosquittoClients.publish(port: site.broker.port, topic: "\(site.base)/strap/request/refresh",
                                                   message: "{\"transaction\":\"r\(sent)\"}")
                try await MosquittoClients.publish(port: site.broker.port, topic: "\(site.base)/bridge/request/health_check",
                                                   message: "{\"transaction\":\"h\(sent)\"}")
                sent += 1
            }
            #expect(site.presence == "living")
            let handover = ContinuousClock.now - walked
            // The kitchen stopped publishing before it handed over: samples from here on are the living room's.
            let samplesAtHandover = site.payloads("strap/sensor/heart_rate").count
            #expect(await site.until(timeout: .seconds(30)) {
                site.payloads("strap/sensor/heart_rate").count > samplesAtHandover
            })
            let flowing = ContinuousClock.now - walked
            print("figure: handover \(RoamingSite.seconds(handover)) s after the strap became 30 dB stronger in the next room, "
                  + "samples again after \(RoamingSite.seconds(flowing)) s (target ≤ 10 s)")
            #expect(site.owners.dropFirst(ownersBefore) == ["living"], "one handover: \(site.owners)")
            #expect(await site.until(timeout: .seconds(30)) {
                site.transactions("strap/response/refresh").count >= sent && site.transactions("bridge/response/health_check").count >= sent
            })
            // A second answer, were there one, would come from a gateway that took the request: each gateway goes
            // through two report intervals of its own first.
            #expect(await site.untilEachReported(2, after: site.reportCounts))
            for (topic, prefix) in [("strap/response/refresh", "r"), ("bridge/response/health_check", "h")] {
                let answered = site.transactions(topic)
                #expect(answered.sorted() == (0..<sent).map { "\(prefix)\($0)" }.sorted(), "\(topic): \(answered.count) answers to \(sent)")
            }
            print("figure: \(sent) device and \(sent) bridge requests during the handover, each answered once")

            // The bedroom now hears the strap better than the kitchen (the living room, its owner, best of all); once
            // the levels have settled, the living room's gateway dies.
            let reportsBefore = site.reportCounts
            try await site.walk(["bedroom": -62, "kitchen": -75])
            // Settled: two reports of each room heard the strap at its new level (the referee smooths each report in).
            #expect(await site.until(timeout: .seconds(30)) {
                ["bedroom": -62.0, "kitchen": -75.0].allSatisfy { room, level in
                    site.heardLevels(of: room, after: reportsBefore[room]!).filter { abs($0 - level) < 1 }.count >= 2
                }
            }, "bedroom: \(site.heardLevels(of: "bedroom", after: reportsBefore["bedroom"]!)), kitchen: \(site.heardLevels(of: "kitchen", after: reportsBefore["kitchen"]!))")
            #expect(site.owners.dropFirst(ownersBefore) == ["living"], "no handover while the levels settle: \(site.owners)")
            let killed = ContinuousClock.now
            site.rooms["living"]!.gateway.child.signal(SIGKILL)
            #expect(await site.until(timeout: .seconds(60)) { site.presence == "bedroom" },
                    "owners: \(site.owners); presence: \(site.payloads("strap/presence"))")
            let takeover = ContinuousClock.now - killed
            let after = site.payloads("strap/sensor/heart_rate").count
            #expect(await site.until(timeout: .seconds(30)) {
                site.payloads("strap/sensor/heart_rate").count > after
            })
            let restored = ContinuousClock.now - killed
            print("figure: takeover \(RoamingSite.seconds(takeover)) s after the owner was killed, samples again after "
                  + "\(RoamingSite.seconds(restored)) s (target ≤ 15 s)")
            #expect(site.owners.dropFirst(ownersBefore) == ["living", "bedroom"], "\(site.owners)")
        }
    }
}
