import Foundation
import Testing
import Wear2MQTTTesting

/// Fault matrix (issue 24, docs/reliability.md "Fault matrix"): the broker killed with SIGKILL in the middle of a
/// GoFIT history sync and started again. The band goes on giving pages while the broker is away; the gateway keeps
/// their records in its spool and publishes them when the broker is back: every record of the band's history
/// arrives, at least once, a repeat with the same `id` and bytes (docs/mqtt-api.md, "Delivery guarantees").
///
/// Two witnesses: the stack's (a clean session, so it sees what the broker had before the kill) and a persistent
/// QoS 1 session on a broker that saves its sessions every second, which gets what was published after the restart
/// even before it has reconnected itself.
@Suite
struct FaultBrokerKillDuringSyncTests {
    @Test func everyRecordArrivesAtLeastOnceWithItsIDAcrossABrokerKill() async throws {
        try await Stack.with(scenarioDevices: GoFITEndToEndTests.scenario(),
                             configuredDevices: GoFITEndToEndTests.configuredDevices, brokerPersistence: true) { stack in
            let durable = try FaultWitness.persistent(stack)
            try await GoFITKillDuringSyncTests.pair(stack)
            let total = try #require(Int(try await stack.control.inspect(GoFITEndToEndTests.band)["history_records"] ?? ""))
            try #require(total > 1000)
            func records() -> [String] {
                GoFITKillDuringSyncTests.kinds.flatMap {
                    stack.payloads("band/fitness/\($0)") + stack.payloads("band/fitness/\($0)", seenBy: durable)
                }
            }
            var seen = RecordIDs()
            func distinctIDs() -> Set<String> {
                for kind in GoFITKillDuringSyncTests.kinds {
                    seen.read(stack.payloads("band/fitness/\(kind)"), from: kind)
                    seen.read(stack.payloads("band/fitness/\(kind)", seenBy: durable), from: "durable \(kind)")
                }
                return seen.ids
            }

            try #require(await FaultWitness.sessionSaved(durable, stack), "the broker never saved the durable witness's session")
            try await stack.request("band/request/sync", #"{"transaction":"s1"}"#)
            // The kill comes once the band has had a quarter of its history acknowledged, asked of the band itself: what
            // the witnesses have seen lags behind under load, and a kill that waited for them once came after the last
            // page, with nothing left to download during the outage.
            #expect(await eventually(timeout: .seconds(120)) {
                (try? await Self.unacknowledged(stack)).map { $0 <= total * 3 / 4 } ?? false
            })
            let pagesAtKill = try await Self.pagesServed(stack)
            await stack.broker.kill()
            let killed = ContinuousClock.now
            // The download goes on without the broker: wait for more pages to be served (into the spool) first.
            // eventually: the simulated band's page count, asked over the simulator's control interface.
            #expect(await eventually(timeout: .seconds(60)) { (try? await Self.pagesServed(stack)) ?? 0 >= pagesAtKill + 5 })
            let pagesInOutage = (try await Self.pagesServed(stack)) - pagesAtKill
            try await stack.broker.start()
            let returned = ContinuousClock.now
            #expect(await stack.until(timeout: .seconds(180)) { distinctIDs().count >= total },
                    "\(distinctIDs().count) of \(total); gateway log: \(stack.gateway.child.errorOutput.suffix(1500))")
            let allThere = ContinuousClock.now - returned

            let byID = stack.recordsByID(records())
            #expect(byID.count == total, "every record of the band's history, by id")
            #expect(byID.filter { $0.value.count > 1 }.isEmpty, "a repeated id with other bytes")
            let sync = await stack.response("band/response/sync", transaction: "s1", timeout: .seconds(60))
                ?? stack.payloads("band/response/sync", seenBy: durable).compactMap(stack.json).first { $0["transaction"] as? String == "s1" }
            #expect(sync?["status"] as? String == "ok", "the sync is answered once the broker is back: \(String(describing: sync))")
            print("figure: broker SIGKILL mid GoFIT sync: \(byID.count) of \(total) records by id, \(pagesInOutage) pages downloaded into the spool during the \(FaultBluetoothdKillTests.seconds(returned - killed)) s outage, all published \(FaultBluetoothdKillTests.seconds(allThere)) s after the broker returned")
        }
    }

    static func unacknowledged(_ stack: Stack) async throws -> Int {
        Int(try await stack.control.inspect(GoFITEndToEndTests.band)["history_unacknowledged"] ?? "") ?? 0
    }

    static func pagesServed(_ stack: Stack) async throws -> Int {
        Int(try await stack.control.inspect(GoFITEndToEndTests.band)["history_pages_served"] ?? "") ?? 0
    }
}

/// A second witness of everything under the stack's base topic, on a persistent QoS 1 session (client id of its
/// own, clean session off): with `brokerPersistence`, what is published while it reconnects waits for it.
enum FaultWitness {
    static func persistent(_ stack: Stack) throws -> MosquittoWitness {
        try stack.witness(topics: ["\(stack.base)/#"], arguments: ["-c", "-q", "1", "-i", "durable-\(UUID().uuidString.prefix(8))"],
                          name: "durable-witness")
    }

    /// Waits until the broker has saved `witness`'s session: the witness has received something (so it is
    /// subscribed) and the broker's persistence file was written after that. A broker killed before its next
    /// autosave (every second here) comes back without the session, and the witness misses whatever is published
    /// before it subscribes again: once, with the whole kill 1.3 s after the start, 1,329 of 1,865 records.
    static func sessionSaved(_ witness: MosquittoWitness, _ stack: Stack) async -> Bool {
        guard await witness.until(timeout: .seconds(60), { witness.lineCount > 0 }) else { return false }
        let subscribed = Date()
        let file = stack.broker.directory.file("mosquitto.db")
        // eventually: the broker's autosave of its persistence file, a file another process writes.
        return await eventually(timeout: .seconds(60)) {
            let written = (try? FileManager.default.attributesOfItem(atPath: file))?[.modificationDate] as? Date
            return (written ?? .distantPast) > subscribed
        }
    }
}
