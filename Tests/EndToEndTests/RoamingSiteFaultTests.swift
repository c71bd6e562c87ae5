import Foundation
import Testing
import Wear2MQTTTesting

/// Issue 26, item 5, with real processes (`RoamingSite`): a strap heard equally well in two rooms through noise, a
/// site split over two bridged brokers, and an owner cut off the network. Times are printed as figures, not asserted
/// (a loaded machine must not fail a correct site); what must hold whatever the timing — one owner, each request
/// answered once, no moment published twice — is asserted.
@Suite
struct RoamingSiteFaultTests {
    // MARK: No flapping

    /// Two rooms hear the strap at the same mean level, each advertisement ± 4 dB of uniform noise from the rooms' own
    /// seeded streams (the simulator's `SetRSSINoise`: the noise is on each advertisement the gateway hears, as
    /// fading is, and the gateway averages an interval's advertisements into its report as it would in a house).
    /// The site runs ten times faster than life: every roaming time divided by 10 (reports every 0.05 s, 0.4 s of
    /// hysteresis, the release timeout 0.5 s) and the advertising interval with them (25 ms for 250 ms, so a report
    /// averages about as many advertisements as at full speed); the rule counts reports, not seconds, so 1,200
    /// reports per gateway are the issue's 10 minutes at 0.5 s. `lost_after_s` (5 s here, 50 s at full speed) only
    /// decides when a silent gateway counts as gone, not flapping, and is kept long so that a gateway starved of
    /// CPU for a moment on a loaded machine is not counted gone. The issue's bound: at most one change of owner.
    @Test func aStrapHeardEquallyInTwoRoomsThroughNoiseChangesOwnerAtMostOnceIn10SimulatedMinutes() async throws {
        let setup = RoamingSite.Setup(roaming: ["report_interval_s: 0.05", "hysteresis_s: 0.4", "hysteresis_db: 6",
                                                "release_timeout_s: 0.5", "lost_after_s: 5"],
                                      advertisingInterval: "25ms")
        let rooms = ["kitchen", "living"]
        try await RoamingSite.with(["kitchen": -60, "living": -60], setup) { site in
            for (room, seed) in zip(rooms, [UInt64(2611), 2612]) {
                let control = site.rooms[room]!.control
                // The simulator's control interface is up a moment after its process starts.
                // eventually: the simulator's control interface, asked until its process answers.
                #expect(await eventually(timeout: .seconds(30)) {
                    (try? await control.setRSSINoise(RoamingSite.strap, amplitude: 4, seed: seed)) != nil
                })
            }
            #expect(await site.until(timeout: .seconds(60)) { !site.owners.isEmpty }, "owners: \(site.owners)")
            let reportsBefore = Dictionary(uniqueKeysWithValues: rooms.map { ($0, site.payloads("bridge/site/sightings/\($0)").count) })
            let reports = 1200
            let started = ContinuousClock.now
            #expect(await site.until(timeout: .seconds(600)) {
                rooms.allSatisfy { site.payloads("bridge/site/sightings/\($0)").count >= reportsBefore[$0]! + reports }
            })
            let elapsed = ContinuousClock.now - started
            let owners = site.owners
            #expect(owners.count - 1 <= 1, "owners in turn: \(owners)")
            // The noise reached the gateways: each room's reports, over the window, average the level and spread.
            for room in rooms {
                let levels = site.payloads("bridge/site/sightings/\(room)").dropFirst(reportsBefore[room]!).prefix(reports)
                    .compactMap { report -> Double? in
                        let strap = (site.json(report)?["devices"] as? [String: Any])?["strap"] as? [String: Any]
                        guard let heard = strap?["heard"] as? Int, heard > 0 else { return nil }
                        return (strap?["rssi"] as? NSNumber)?.doubleValue
                    }
                let mean = levels.reduce(0, +) / Double(max(1, levels.count))
                #expect(levels.count >= reports / 2 && abs(mean + 60) < 1, "\(room): \(levels.count) reports heard, mean \(mean)")
                #expect((levels.max() ?? 0) - (levels.min() ?? 0) >= 4, "\(room): the reports do not show the noise")
            }
            print("figure: \(owners.count - 1) change(s) of owner (\(owners)) in \(reports) reports per gateway "
                  + "(10 simulated minutes) over \(RoamingSite.seconds(elapsed)) s; target ≤ 1")
        }
    }

    // MARK: Two bridged brokers

    /// Kitchen and living room on broker A, the bedroom on broker B, bridged to A. The bedroom is the referee (the
    /// smallest id). The wearer walks from the kitchen to the bedroom (a handover across the bridge, A to B) and
    /// back to the living room (B to A), while device and bridge requests go to both brokers in turn.
    ///
    /// What the ordering argument still gives (docs/roaming.md, "With bridged brokers"): everything published on the
    /// referee's broker reaches every gateway in that broker's order, so requests published there are answered
    /// exactly once; the referee does not change, so bridge requests are answered once wherever they are published.
    /// A device request published on the other broker within the bridge's delay of an assignment can be answered by
    /// both owners or by neither: counted and printed, and bounded here only by "never more than twice".
    @Test func aWalkAcrossTwoBridgedBrokersHandsTheStrapOverAndRequestsOnTheRefereesBrokerAreAnsweredOnce() async throws {
        let setup = RoamingSite.Setup(brokers: 2, brokerOfRoom: ["bedroom": 1])
        try await RoamingSite.with(["kitchen": -55, "living": -80, "bedroom": -85], setup) { site in
            #expect(await site.until(timeout: .seconds(60)) { site.presence == "kitchen" }, "presence: \(site.payloads("strap/presence"))")
            #expect(await site.until(timeout: .seconds(30)) { site.payloads("strap/sensor/heart_rate").count >= 3 })
            var sent = 0
            /// Walks, then sends requests to both brokers in turn until `room` holds the strap; the handover time.
            func walk(_ levels: [String: Int], to room: String) async throws -> (moved: Double, flowing: Double) {
                let walked = ContinuousClock.now
                try await site.walk(levels)
                while site.presence != room, ContinuousClock.now - walked < .seconds(60) {
                    let port = site.brokers[sent % 2].port
                    try await MosquittoClients.publish(port: port, topic: "\(site.base)/strap/request/refresh",
                                                       message: "{\"transaction\":\"r\(sent)\"}")
                    try await MosquittoClients.publish(port: port, topic: "\(site.base)/bridge/request/health_check",
                                                       message: "{\"transaction\":\"h\(sent)\"}")
                    sent += 1
                    // A pair a report of the site (three gateways, one each every 0.5 s: about six a second), by the
                    // site's own clock: every process spawned costs the machine the rest of the suite runs on.
                    let reports = site.allReports
                    _ = await site.until(timeout: .seconds(30)) { site.presence == room || site.allReports > reports }
                }
                let moved = ContinuousClock.now - walked
                #expect(site.presence == room)
                let samples = site.payloads("strap/sensor/heart_rate").count
                #expect(await site.until(timeout: .seconds(30)) {
                    site.payloads("strap/sensor/heart_rate").count > samples
                })
                return (RoamingSite.seconds(moved), RoamingSite.seconds(ContinuousClock.now - walked))
            }
            let across = try await walk(["kitchen": -85, "bedroom": -55], to: "bedroom")
            let back = try await walk(["bedroom": -85, "living": -55], to: "living")
            #expect(site.owners == ["kitchen", "bedroom", "living"])

            // Every response reaches both brokers: wait for the answers that must come, on both.
            let due = Set((0..<sent).map { "h\($0)" } + stride(from: 1, to: sent, by: 2).map { "r\($0)" })
            #expect(await site.until(timeout: .seconds(30)) {
                (0..<2).allSatisfy { broker in
                    due.isSubset(of: site.transactions("bridge/response/health_check", on: broker)
                        + site.transactions("strap/response/refresh", on: broker))
                }
            })
            // A second answer, were there one, would come from a gateway that took the request: each gateway goes
            // through two report intervals of its own first.
            #expect(await site.untilEachReported(2, after: site.reportCounts))
            var anomalies: [String] = []
            for broker in 0..<2 {
                let bridgeAnswers = site.transactions("bridge/response/health_check", on: broker)
                #expect(bridgeAnswers.sorted() == (0..<sent).map { "h\($0)" }.sorted(), "broker \(broker): \(bridgeAnswers.count) to \(sent)")
                let answers = Dictionary(grouping: site.transactions("strap/response/refresh", on: broker), by: { $0 }).mapValues(\.count)
                for request in 0..<sent {
                    let count = answers["r\(request)"] ?? 0
                    if request % 2 == 1 {
                        #expect(count == 1, "r\(request), published on the referee's broker, answered \(count) times (witness of broker \(broker))")
                    } else {
                        #expect(count <= 2, "r\(request) answered \(count) times")
                        if count != 1, broker == 0 { anomalies.append("r\(request)×\(count)") }
                    }
                }
            }
            print("figure: bridged brokers: handover A→B \(across.moved) s (samples again after \(across.flowing) s), "
                  + "B→A \(back.moved) s (samples again after \(back.flowing) s); \(sent) device and \(sent) bridge requests "
                  + "on both brokers in turn, those on the other broker answered other than once: \(anomalies)")
        }
    }

    // MARK: An owner cut off the network

    /// The strap's owner, the kitchen, stops (SIGSTOP: its broker connection stays open, so the broker notices only
    /// when its keepalive runs out, 1.5 × `mqtt.keepalive_s` = 90 s here); the referee, the bedroom, sees its reports
    /// stop and takes the strap after `lost_after_s`. Two rooms
    /// are enough (the referee is the next owner), and each gateway spared is CPU for the rest of the suite.
    @Test func anOwnerCutOffTheNetworkIsReplacedAndLetsTheStrapGoWhenItReturns() async throws {
        try await Self.cutOff(owner: "kitchen", next: "bedroom", levels: ["bedroom": -58, "kitchen": -55])
    }

    /// The same when the owner is also the referee (the bedroom): the kitchen counts it gone by its reports too, and
    /// becomes referee after `lost_after_s` while the bedroom's record still stands (before, it waited for the
    /// broker's keepalive check and the will: 13–15 s with a keepalive of 6 s, up to 16 s).
    @Test func aRefereeOwningTheStrapCutOffTheNetworkIsReplacedAndLetsTheStrapGoWhenItReturns() async throws {
        try await Self.cutOff(owner: "bedroom", next: "kitchen", levels: ["bedroom": -55, "kitchen": -58])
    }

    /// Each room's simulator makes the strap beat at its own resting rate, so a sample's `bpm` tells which gateway
    /// published it: 60 (35–95) in the kitchen, 140 (115–175) in the living room, 210 (185–220) in the bedroom.
    static let restingRates = ["kitchen": 60, "living": 140, "bedroom": 210]

    static func room(ofRate bpm: Int) -> String? { restingRates.min { abs($0.value - bpm) < abs($1.value - bpm) }?.key }

    /// The wearer stays in the owner's room, the next room 3 dB weaker: within the hysteresis, so once the owner
    /// is back the strap stays where it went, and the end holds exactly one change of owner.
    /// The gateways keep the default keepalive (60 s): the takeover must come from the site's own signal, the
    /// reports, not from the broker's will.
    static func cutOff(owner: String, next: String, levels: [String: Int]) async throws {
        let setup = RoamingSite.Setup(keepaliveSeconds: 60, restingRateOfRoom: restingRates)
        try await RoamingSite.with(levels, setup) { site in
            #expect(await site.until(timeout: .seconds(60)) { site.presence == owner }, "presence: \(site.payloads("strap/presence"))")
            #expect(await site.until(timeout: .seconds(30)) { site.payloads("strap/sensor/heart_rate").count >= 3 })
            func samples() -> [(room: String, ts: Int64)] {
                site.payloads("strap/sensor/heart_rate").compactMap(site.json).compactMap { sample in
                    guard let bpm = sample["bpm"] as? Int, let ts = (sample["ts"] as? NSNumber)?.int64Value,
                          let room = room(ofRate: bpm) else { return nil }
                    return (room, ts)
                }
            }
            #expect(samples().allSatisfy { $0.room == owner })
            func request(_ transaction: String) async throws {
                try await MosquittoClients.publish(port: site.broker.port, topic: "\(site.base)/strap/request/refresh",
                                                   message: "{\"transaction\":\"\(transaction)\"}")
            }

            let cut = ContinuousClock.now
            site.rooms[owner]!.gateway.child.signal(SIGSTOP)
            var duringCut = 0
            while site.owners.last != next, ContinuousClock.now - cut < .seconds(120) {
                // Two a report of the gateway still running (one every 0.5 s: about four a second, each a process
                // spawned), by the site's own clock, until the strap has a new owner.
                let reports = site.allReports
                for _ in 0..<2 {
                    try await request("c\(duringCut)")
                    duringCut += 1
                }
                _ = await site.until(timeout: .seconds(30)) { site.owners.last == next || site.allReports > reports }
            }
            let takeover = ContinuousClock.now - cut
            #expect(await site.until(timeout: .seconds(30)) { site.presence == next }, "owners: \(site.owners)")
            #expect(await site.until(timeout: .seconds(30)) { samples().contains { $0.room == next } })
            let restored = ContinuousClock.now - cut
            let willFired = site.payloads("bridge/site/gateways/\(owner)").contains { Stack.isCleared($0) }
            #expect(!willFired, "the takeover waited for the broker's will")
            let reason = site.payloads("bridge/site/owners/strap").last.flatMap(site.json)?["reason"] as? String
            let epoch = site.payloads("bridge/site/owners/strap").last.flatMap(site.json)?["epoch"] as? Int

            // The network comes back: the owner reads the greater assignment and lets the strap go — its simulator
            // sees the link end, and it hands over with the new epoch.
            let linesAtHeal = site.payloads("strap/sensor/heart_rate").count
            let healed = ContinuousClock.now
            site.rooms[owner]!.gateway.child.signal(SIGCONT)
            let control = site.rooms[owner]!.control
            // eventually: the link as the owner's simulator sees it, asked over its control interface.
            #expect(await eventually(timeout: .seconds(60)) {
                (try? await control.listDevices())?.first { $0.address == RoamingSite.strap }?.state != "connected"
            }, "\(owner)'s log: \(site.rooms[owner]!.gateway.child.errorOutput.suffix(3000))")
            #expect(await site.until(timeout: .seconds(60)) {
                site.payloads("bridge/site/handoff/strap").compactMap(site.json).contains {
                    $0["from"] as? String == owner && $0["epoch"] as? Int == epoch
                }
            }, "handoffs: \(site.payloads("bridge/site/handoff/strap"))")
            let released = ContinuousClock.now - healed

            // After the heal: one owner, and requests answered by it alone.
            for index in 0..<20 { try await request("a\(index)") }
            #expect(await site.until(timeout: .seconds(30)) {
                Set(site.transactions("strap/response/refresh").filter { $0.hasPrefix("a") }).count == 20
            })
            // A second answer, were there one, would come from a gateway that took the request: each gateway goes
            // through two report intervals of its own first.
            #expect(await site.untilEachReported(2, after: site.reportCounts))
            #expect(site.presence == next && site.owners == [owner, next], "owners: \(site.owners)")
            let answers = Dictionary(grouping: site.transactions("strap/response/refresh"), by: { $0 }).mapValues(\.count)
            #expect(answers.values.allSatisfy { $0 == 1 }, "answered more than once: \(answers.filter { $0.value > 1 })")
            #expect((0..<20).allSatisfy { answers["a\($0)"] == 1 })
            let unanswered = (0..<duringCut).filter { answers["c\($0)"] == nil }.count

            // What a subscriber arriving now (Home Assistant after its restart) reads: the new owner's view. The cut
            // gateway published nothing for the strap on its return, and its release retained no `offline`.
            let retained = try await MosquittoClients.receive(
                port: site.broker.port, topic: "\(site.base)/strap/#", count: 100, timeoutSeconds: 2, extraArguments: ["--retained-only"])
            func retainedPayload(_ suffix: String) -> String? {
                retained.first { $0.hasPrefix("\(site.base)/strap\(suffix) ") }.map { String($0.drop { $0 != " " }.dropFirst()) }
            }
            #expect(retainedPayload("").flatMap(site.json)?["connection"] as? String == "connected", "retained: \(retained)")
            #expect(retainedPayload("/availability").flatMap(site.json)?["state"] as? String == "online", "retained: \(retained)")
            #expect(retainedPayload("/presence").flatMap(site.json)?["gateway"] as? String == next)

            // No moment published by both: every sample the cut owner published has an earlier time than the
            // first one through the next owner (the cut owner's samples of its last moments before the cut may
            // arrive late, once it returns; none may be stamped after the next owner began).
            let all = samples()
            let firstOfNext = all.filter { $0.room == next }.map(\.ts).min() ?? .max
            let lateFromOwner = all.filter { $0.room == owner && $0.ts >= firstOfNext }
            #expect(lateFromOwner.isEmpty, "\(lateFromOwner.count) samples from \(owner) stamped after \(next) began")
            let afterHeal = site.payloads("strap/sensor/heart_rate").dropFirst(linesAtHeal).compactMap(site.json)
                .filter { ($0["bpm"] as? Int).flatMap(room(ofRate:)) == owner }.count
            print("figure: \(owner) cut off (SIGSTOP): the strap assigned to \(next) after \(RoamingSite.seconds(takeover)) s "
                  + "(reason \(reason ?? "?"), will fired before: \(willFired)), samples again after \(RoamingSite.seconds(restored)) s; "
                  + "network back: strap released and handed over after \(RoamingSite.seconds(released)) s; "
                  + "\(duringCut) requests during the cut, \(unanswered) unanswered, none twice; "
                  + "\(afterHeal) samples from \(owner) published after its return, none stamped after \(next) began")
        }
    }
}
