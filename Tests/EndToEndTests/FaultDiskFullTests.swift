import Foundation
import Testing
import Wear2MQTTTesting

/// Fault matrix (issue 24, docs/reliability.md "Fault matrix"): the disk fills up under the durable spool and
/// under the state folder. Two tmpfs mounts of the test's own give a real `ENOSPC`: one as `gateway.state_dir`,
/// one on its `spool/` inside it. (The test mounts them for real; a machine that does not allow it fails the test
/// with mount's reason rather than skipping it.)
///
/// - Spool full mid-sync: no record the gateway could not store is acknowledged to the band (it keeps them), the
///   `sync` answer is a clear error, `bridge/health` counts the failures (`spool_failures`); with space back, the
///   next sync brings every record of the band's history.
/// - State folder full: `device/add` is refused with the cause ("No space left on device") and changes nothing; with
///   space back it is accepted and survives a restart.
@Suite
struct FaultDiskFullTests {
    @Test func aFullDiskRefusesWhatItCannotKeepLosesNothingAcknowledgedAndRecoversWhenSpaceReturns() async throws {
        let root = try TemporaryDirectory(prefix: "wear2mqtt-diskfull")
        defer { root.remove() }
        let state = try await SmallFileSystem.mount(at: root.file("state"), kilobytes: 2048)
        var spool: SmallFileSystem?
        do {
            // Room for the band's whole history once the filler is gone: two days are 500-560 records of about 500
            // bytes in the spool, depending on the hour (256 KiB failed the last record at 530).
            spool = try await SmallFileSystem.mount(at: root.file("state/spool"), kilobytes: 1024)
            print("figure: disk full: tmpfs mounts of 2 MiB (state_dir) and 1 MiB (spool) — a real ENOSPC, no injection")
            try await Self.run(state: state, spool: try #require(spool))
        } catch {
            await spool?.unmount()
            await state.unmount()
            throw error
        }
        await spool?.unmount()
        await state.unmount()
    }

    static func run(state: SmallFileSystem, spool: SmallFileSystem) async throws {
        try await Stack.with(scenarioDevices: GoFITEndToEndTests.scenario(options: "{ history_days: 2 }"),
                             configuredDevices: GoFITEndToEndTests.configuredDevices, stateDirectory: state.path) { stack in
            try await GoFITKillDuringSyncTests.pair(stack)
            try await stack.request("bridge/request/options", #"{"options":{"health_interval_s":5},"transaction":"o1"}"#)
            try #require(await stack.response("bridge/response/options", transaction: "o1")?["status"] as? String == "ok")
            let band = GoFITEndToEndTests.band
            let total = try #require(Int(try await stack.control.inspect(band)["history_records"] ?? ""))
            try #require(total > 100)
            func records() -> [String] { GoFITKillDuringSyncTests.kinds.flatMap { stack.payloads("band/fitness/\($0)") } }
            func unacknowledged() async throws -> Int { Int(try await stack.control.inspect(band)["history_unacknowledged"] ?? "") ?? -1 }

            // 1. The spool's disk is full: nothing can be stored, so nothing may be acknowledged to the band.
            let filled = spool.fill()
            try await stack.request("band/request/sync", #"{"transaction":"full"}"#)
            let refused = await stack.response("band/response/sync", transaction: "full")
            #expect(Stack.error(refused).code == "INTERNAL", "\(String(describing: refused))")
            let message = (refused?["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains("could not store") || message.contains("No space left on device"), "a clear error: \(message)")
            let keptByBand = try await unacknowledged()
            #expect(keptByBand == total, "the band keeps every record the gateway could not store")
            #expect(stack.gateway.child.errorOutput.contains("No space left on device"), "the log names the cause")
            var failures = 0
            #expect(await stack.until(timeout: .seconds(30)) {
                failures = stack.payloads("bridge/health").compactMap(stack.json)
                    .compactMap { ($0["mqtt"] as? [String: Any])?["spool_failures"] as? Int }.max() ?? 0
                return failures > 0
            }, "bridge/health counts the records the spool could not store")

            // Space returns: the next sync brings the whole history, and the band forgets it only then.
            spool.free()
            let freed = ContinuousClock.now
            try await stack.request("band/request/sync", #"{"transaction":"again"}"#)
            let synced = await stack.response("band/response/sync", transaction: "again", timeout: .seconds(180))
            #expect(synced?["status"] as? String == "ok", "\(String(describing: synced))")
            let ids = Set(records().compactMap { stack.json($0)?["id"] as? String })
            #expect(ids.count == total, "\(ids.count) of \(total) records after space returned")
            #expect(try await unacknowledged() == 0)
            let recovered = ContinuousClock.now - freed

            // 2. The state folder is full: a new device is refused with the cause and nothing changes.
            let tag = "C0:FF:EE:00:00:77"
            state.fill()
            try await stack.request("bridge/request/device/add", #"{"address":"\#(tag)","driver":"standard","name":"tag","transaction":"a1"}"#)
            let noRoom = await stack.response("bridge/response/device/add", transaction: "a1")
            #expect(Stack.error(noRoom).code == "INTERNAL", "\(String(describing: noRoom))")
            let addMessage = (noRoom?["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(addMessage.contains("No space left on device"), "a clear error: \(addMessage)")
            #expect(!(stack.payloads("bridge/devices").last ?? "").contains(#""id":"tag""#), "not added")

            state.free()
            try await stack.request("bridge/request/device/add", #"{"address":"\#(tag)","driver":"standard","name":"tag","transaction":"a2"}"#)
            #expect(await stack.response("bridge/response/device/add", transaction: "a2")?["status"] as? String == "ok")
            let listsBefore = stack.payloads("bridge/devices").count
            try await stack.restartGateway()
            #expect(await stack.until(timeout: .seconds(45)) {
                stack.payloads("bridge/devices").dropFirst(listsBefore).contains { $0.contains(#""id":"tag""#) }
            }, "what was answered ok survives a restart")
            print("figure: disk full: spool ENOSPC after filling \(filled / 1024) KiB: sync answered \(Stack.error(refused).code ?? "ok"), \(failures) spool failures in bridge/health, band kept \(keptByBand) of \(total) records; space back: \(ids.count) of \(total) records by id in \(FaultBluetoothdKillTests.seconds(recovered)) s; state_dir ENOSPC: device/add answered \(Stack.error(noRoom).code ?? "ok") (\(addMessage)), accepted once space returned")
        }
    }
}
