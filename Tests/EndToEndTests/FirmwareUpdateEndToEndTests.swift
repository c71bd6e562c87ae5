import Foundation
import Simulator
import Testing
import Wear2MQTTTesting
import Wearables
import SimulatedWearables
import Firmware

/// Firmware updates over the whole product (issue 10, docs/protocols/dfu.md): a package in `dfu.dir` is checked
/// by the gateway, the simulated Care-Xc reboots into its Nordic bootloader at the next address, the gateway sends
/// the image there, and the band comes back with the new Firmware Revision in its state. Serialized: nine whole
/// stacks at once beside the other end-to-end suites overload a 2-core machine and make their timings flaky.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct FirmwareUpdateEndToEndTests {
    static let band = "C0:F1:70:00:00:01"
    static let bootloader = "C0:F1:70:00:00:02"
    /// 60 kB: 15 Secure DFU objects of 4 KiB, so progress has room to be seen and a drop at 40 % is mid-image.
    static let image: [UInt8] = (0..<60_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 7) }
    /// nrfutil's `--application-version-string 2.2.0`.
    static let securePackage = DFUPackageBuilder.application(firmware: image, firmwareVersion: 20200)
    static let legacyPackage = DFUPackageBuilder.legacyApplication(firmware: image, applicationVersion: 20301)
    static let buttonless = "8ec90003-f315-4f60-9fb8-838830daea50"

    static func scenario(options: String = "") -> String {
        """
          - kind: gofit_care_xc
            address: \(band)
            advertising_interval: 100ms
            options: { history_days: 0\(options.isEmpty ? "" : ", " + options) }
        """
    }

    static let configuredDevices = """
      - address: \(band)
        name: band
    """

    /// The firmware folder with `files` in it, and the gateway's `dfu:` and `allow:` sections pointing at it.
    static func firmwareFolder(_ files: [String: [UInt8]], allow: Bool = true) throws -> (TemporaryDirectory, String) {
        let folder = try TemporaryDirectory(prefix: "wear2mqtt-dfu")
        for (name, bytes) in files {
            try Data(bytes).write(to: URL(fileURLWithPath: folder.file(name)))
        }
        return (folder, """
        dfu:
          dir: \(folder.path)
          max_mb: 1
        allow:
          dfu: \(allow)
        """)
    }

    /// The stack with the band and a firmware folder; the folder is removed afterwards.
    static func with(options: String = "", files: [String: [UInt8]] = ["carexc-2.2.0.zip": securePackage],
                     allow: Bool = true, _ body: (inout Stack) async throws -> Void) async throws {
        let (folder, extra) = try firmwareFolder(files, allow: allow)
        defer { folder.remove() }
        try await Stack.with(scenarioDevices: scenario(options: options), configuredDevices: configuredDevices,
                             gatewayExtra: extra, body)
    }

    static func sha256(_ bytes: [UInt8]) -> String { DFUPackageFile.sha256(of: bytes) }

    func state(_ stack: Stack) -> [String: Any]? { stack.last("band") }

    func update(_ stack: Stack) -> [String: Any]? { state(stack)?["update"] as? [String: Any] }

    func connected(_ stack: Stack) async -> Bool {
        await eventually(timeout: .seconds(45)) { state(stack)?["connection"] as? String == "connected" }
    }

    func inspect(_ stack: Stack) async throws -> [String: String] { try await stack.control.inspect(Self.band) }

    func dfu(_ stack: Stack, file: String = "carexc-2.2.0.zip", sha256: String = sha256(securePackage),
             _ transaction: String, timeout: Duration = .seconds(120)) async throws -> [String: Any]? {
        try await stack.request("band/request/dfu", #"{"file":"\#(file)","sha256":"\#(sha256)","transaction":"\#(transaction)"}"#)
        return await stack.response("band/response/dfu", transaction: transaction, timeout: timeout)
    }

    /// Every `update.progress` the band's state showed, in order.
    func progressSeen(_ stack: Stack) -> [Double] {
        stack.payloads("band").compactMap(stack.json).compactMap { ($0["update"] as? [String: Any])?["progress"] as? Double }
    }

    @Test func aGoodPackageUpdatesTheBandAndTheStateShowsTheNewVersion() async throws {
        try await Self.with { stack in
            #expect(await connected(stack))
            try await stack.request("band/get", #"{"transaction":"before"}"#)
            let before = await stack.response("band/response/refresh", transaction: "before")
            #expect((before?["data"] as? [String: Any])?["firmware"] as? String == "2.1.0")

            let answer = try #require(try await dfu(stack, "u1"))
            #expect(answer["status"] as? String == "ok", "\(answer)")
            let data = try #require(answer["data"] as? [String: Any])
            #expect(data["firmware"] as? String == "2.2.0")
            #expect(data["file"] as? String == "carexc-2.2.0.zip")
            #expect(data["bytes"] as? Int == Self.image.count)

            // The state went updating → idle with the version read back, and shows it as the firmware too.
            #expect(await eventually { update(stack)?["state"] as? String == "idle" && state(stack)?["firmware"] as? String == "2.2.0" })
            #expect(update(stack)?["firmware"] as? String == "2.2.0")
            let progress = progressSeen(stack)
            #expect(progress.contains { $0 > 0 && $0 < 100 }, "progress seen: \(progress)")
            #expect(progress == progress.sorted(), "progress only moves forward: \(progress)")
            let updating = stack.payloads("band").compactMap(stack.json).compactMap { $0["update"] as? [String: Any] }
                .filter { $0["state"] as? String == "updating" }
            #expect(updating.contains { ($0["remaining_s"] as? Double).map { $0 >= 0 } ?? false }, "remaining_s while updating")
            let shown = try await inspect(stack)
            #expect(shown["dfu_updates"] == "1" && shown["firmware"] == "2.2.0" && shown["dfu_mode"] == "application")
            #expect(shown["dfu_bytes_received"] == String(Self.image.count), "sent once, nothing twice")
            // The band is the application again and the gateway is connected to it.
            #expect(await connected(stack))
        }
    }

    @Test func aWrongSHA256OrABadRequestSendsNothingToTheBand() async throws {
        var corrupt = Self.securePackage
        corrupt[corrupt.count / 2] ^= 0xFF
        let files: [String: [UInt8]] = [
            "carexc-2.2.0.zip": Self.securePackage,
            "not-a-zip.zip": Array("firmware".utf8),
            "corrupt.zip": corrupt,
            "big.zip": [UInt8](repeating: 0, count: 1_100_000),
        ]
        try await Self.with(files: files) { stack in
            #expect(await connected(stack))
            let wrong = String(repeating: "ab", count: 32)
            let mismatch = try #require(try await dfu(stack, sha256: wrong, "sha"))
            #expect(Stack.error(mismatch).code == "INVALID_VALUE")
            let message = (mismatch["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains("SHA-256") && message.contains("nothing was sent"), "\(message)")

            let refused: [(String, String, String)] = [
                ("escape", "../carexc-2.2.0.zip", Self.sha256(Self.securePackage)),
                ("absolute", "/etc/passwd", Self.sha256(Self.securePackage)),
                ("missing", "nope.zip", Self.sha256(Self.securePackage)),
                ("notzip", "not-a-zip.zip", Self.sha256(Array("firmware".utf8))),
                ("corrupt", "corrupt.zip", Self.sha256(corrupt)),
                ("big", "big.zip", Self.sha256([UInt8](repeating: 0, count: 1_100_000))),
            ]
            for (transaction, file, sha) in refused {
                let answer = try await dfu(stack, file: file, sha256: sha, transaction)
                #expect(Stack.error(answer).code == "INVALID_VALUE", "\(file): \(answer ?? [:])")
            }
            // Malformed requests never reach the package checks: bad JSON, a wrong type, a missing field, a short hash.
            let payloads: [(String, String)] = [
                ("{not json", "INVALID_PAYLOAD"),
                (#"{"file":5,"sha256":"\#(Self.sha256(Self.securePackage))","transaction":"t5"}"#, "INVALID_VALUE"),
                (#"{"file":"carexc-2.2.0.zip","transaction":"t6"}"#, "INVALID_VALUE"),
                (#"{"file":"carexc-2.2.0.zip","sha256":"00","transaction":"t7"}"#, "INVALID_VALUE"),
            ]
            for (payload, code) in payloads {
                let before = stack.payloads("band/response/dfu").count
                try await stack.request("band/request/dfu", payload)
                #expect(await eventually { stack.payloads("band/response/dfu").dropFirst(before).contains { $0.contains(code) } },
                        "\(payload) → \(code)")
            }
            try await stack.request("ghost/request/dfu",
                                    #"{"file":"carexc-2.2.0.zip","sha256":"\#(Self.sha256(Self.securePackage))","transaction":"g"}"#)
            #expect(Stack.error(await stack.response("ghost/response/dfu", transaction: "g")).code == "DEVICE_NOT_FOUND")
            try await stack.request("band/request/dfu/cancel", #"{"now":true,"transaction":"c"}"#)
            #expect(Stack.error(await stack.response("band/response/dfu/cancel", transaction: "c")).code == "INVALID_VALUE")
            try await stack.request("band/request/dfu/cancel", #"{"transaction":"c2"}"#)
            let nothing = await stack.response("band/response/dfu/cancel", transaction: "c2")
            #expect((nothing?["data"] as? [String: Any])?["cancelled"] as? Bool == false)

            // Nothing reached the band: no write to its buttonless characteristic, it is still its application.
            #expect(try await stack.control.received(Self.band, characteristic: Self.buttonless).isEmpty)
            let shown = try await inspect(stack)
            #expect(shown["dfu_mode"] == "application" && shown["dfu_bytes_received"] == "0" && shown["firmware"] == "2.1.0")
            #expect(update(stack) == nil, "no update was ever in the state")
            #expect(state(stack)?["connection"] as? String == "connected")
        }
    }

    @Test func anUpdateIsForbiddenUnlessAllowed() async throws {
        try await Self.with(allow: false) { stack in
            #expect(await connected(stack))
            let answer = try await dfu(stack, "f")
            #expect(Stack.error(answer).code == "FORBIDDEN")
            #expect(try await inspect(stack)["dfu_bytes_received"] == "0")
        }
    }

    @Test func aLinkDroppedAt40PercentIsResumedAndTheUpdateCompletes() async throws {
        try await Self.with(options: "dfu_drop_at: 0.4") { stack in
            #expect(await connected(stack))
            let answer = try #require(try await dfu(stack, "u2"))
            #expect(answer["status"] as? String == "ok", "\(answer)")
            #expect((answer["data"] as? [String: Any])?["firmware"] as? String == "2.2.0")
            let shown = try await inspect(stack)
            #expect(shown["dfu_injected_drops"] == "1" && shown["dfu_updates"] == "1" && shown["firmware"] == "2.2.0")
            // Resumed from what the bootloader reported: at most one 4 KiB object sent again, not the 24 kB before it.
            let received = try #require(Int(shown["dfu_bytes_received"] ?? ""))
            #expect(received >= Self.image.count && received - Self.image.count <= 4_096, "received \(received)")
            let progress = progressSeen(stack)
            #expect(progress.contains { $0 >= 35 && $0 < 100 }, "progress seen: \(progress)")
            #expect(await eventually { state(stack)?["firmware"] as? String == "2.2.0" })
        }
    }

    @Test func aRejectedObjectEndsInDFUFailedWithTheBootloadersCode() async throws {
        // 0x0B0C: EXT_ERROR with extended error VERIFICATION_FAILED, on the first data object's Execute.
        try await Self.with(options: "dfu_reject: 0x0B0C") { stack in
            #expect(await connected(stack))
            let answer = try await dfu(stack, "u3")
            let failure = Stack.error(answer)
            #expect(failure.code == "DFU_FAILED" && failure.vendor == 0x0B0C, "\(answer ?? [:])")
            #expect(await eventually {
                let error = update(stack)?["error"] as? [String: Any]
                return update(stack)?["state"] as? String == "idle" && error?["vendor_code"] as? Int == 0x0B0C
            })
            let shown = try await inspect(stack)
            #expect(shown["dfu_updates"] == "0" && shown["firmware"] == "2.1.0" && shown["dfu_mode"] == "bootloader")

            // The band waits in its bootloader (its application may be gone): the next request goes there directly.
            let retried = try #require(try await dfu(stack, "u3b"))
            #expect((retried["data"] as? [String: Any])?["firmware"] as? String == "2.2.0", "\(retried)")
            #expect(await eventually { state(stack)?["firmware"] as? String == "2.2.0" && update(stack)?["error"] == nil },
                    "\(update(stack) ?? [:]), firmware \(state(stack)?["firmware"] ?? "none")")
        }
    }

    @Test func anUpdateScheduledWhileTheBandIsAwayRunsWhenItReturnsEvenAfterAGatewayRestart() async throws {
        try await Self.with { stack in
            #expect(await connected(stack))
            try await stack.control.setAdvertising(Self.band, false)
            try await stack.control.dropLink(Self.band)
            #expect(await eventually { state(stack)?["connection"] as? String != "connected" })

            let answer = try #require(try await dfu(stack, "s1", timeout: .seconds(20)))
            #expect((answer["data"] as? [String: Any])?["update"] as? String == "scheduled", "\(answer)")
            #expect(await eventually { update(stack)?["state"] as? String == "scheduled" })
            // A second request while one waits is BUSY.
            let busy = try await dfu(stack, "s2", timeout: .seconds(20))
            #expect(Stack.error(busy).code == "BUSY")

            // The schedule is kept in the state directory: a restarted gateway still has it.
            try await stack.restartGateway()
            try await Task.sleep(for: .seconds(2))
            #expect(try await inspect(stack)["dfu_bytes_received"] == "0", "nothing ran while the band was away")
            try await stack.control.setAdvertising(Self.band, true)
            #expect(await eventually(timeout: .seconds(90)) {
                update(stack)?["state"] as? String == "idle" && state(stack)?["firmware"] as? String == "2.2.0"
            })
            #expect(try await inspect(stack)["dfu_updates"] == "1")
        }
    }

    @Test func aCancelledUpdateStopsAndTheNextOneResumesIt() async throws {
        try await Self.with { stack in
            #expect(await connected(stack))
            // Slow the bootloader's writes so the update is still running when the cancel arrives.
            try await stack.control.setLatency(Self.bootloader, milliseconds: 15)
            try await stack.request("band/request/dfu",
                                    #"{"file":"carexc-2.2.0.zip","sha256":"\#(Self.sha256(Self.securePackage))","transaction":"u4"}"#)
            #expect(await eventually(timeout: .seconds(60)) { (update(stack)?["progress"] as? Double ?? 0) >= 10 })
            try await stack.request("band/request/dfu/cancel", #"{"transaction":"c4"}"#)
            let cancelled = await stack.response("band/response/dfu/cancel", transaction: "c4")
            #expect((cancelled?["data"] as? [String: Any])?["was"] as? String == "updating", "\(cancelled ?? [:])")
            let stopped = Stack.error(await stack.response("band/response/dfu", transaction: "u4"))
            #expect(stopped.code == "DFU_FAILED")
            let partial = try #require(Int(try await inspect(stack)["dfu_bytes_received"] ?? ""))
            #expect(partial > 0 && partial < Self.image.count)

            // The band stayed in its bootloader; the next request finds it there and resumes.
            try await stack.control.setLatency(Self.bootloader, milliseconds: 0)
            let resumed = try #require(try await dfu(stack, "u5"))
            #expect((resumed["data"] as? [String: Any])?["firmware"] as? String == "2.2.0", "\(resumed)")
            let received = try #require(Int(try await inspect(stack)["dfu_bytes_received"] ?? ""))
            #expect(received - Self.image.count <= 4_096, "received \(received)")
        }
    }

    @Test func aLegacyDFUBandIsUpdatedThroughItsApplicationsDFUService() async throws {
        try await Self.with(options: "dfu: legacy", files: ["legacy.zip": Self.legacyPackage]) { stack in
            #expect(await connected(stack))
            let answer = try #require(try await dfu(stack, file: "legacy.zip", sha256: Self.sha256(Self.legacyPackage), "l1"))
            #expect(answer["status"] as? String == "ok", "\(answer)")
            #expect((answer["data"] as? [String: Any])?["firmware"] as? String == "2.3.1")
            #expect(await eventually { state(stack)?["firmware"] as? String == "2.3.1" })
        }
    }

    @Test func aBandWithoutNordicDFUAnswersNotSupported() async throws {
        try await Self.with(options: "dfu: none") { stack in
            #expect(await connected(stack))
            let answer = try await dfu(stack, "n1")
            #expect(Stack.error(answer).code == "NOT_SUPPORTED")
            #expect(await eventually { state(stack)?["connection"] as? String == "connected" })
        }
    }
}
