import BlueZ
import Firmware
import Foundation
import Gateway
import SimulatedWearables
import Testing
import Wear2MQTTTesting
import Wearables

/// Firmware updates through the whole gateway in memory (docs/protocols/dfu.md): the simulated Care-Xc reboots
/// into its Nordic bootloader at the next address, which the in-memory central hosts as its companion. Refusals,
/// drops, rejections, schedules across a restart and cancels; the end-to-end suite keeps a Secure and a Legacy
/// update over the bus.
@Suite("Gateway in memory: firmware updates", .timeLimit(.minutes(1)))
struct FirmwareGatewayTests {
    static let band = "C0:F1:70:00:00:01"
    static let address = BluetoothAddress(band)!
    static let bootloader = BluetoothAddress("C0:F1:70:00:00:02")!
    static let buttonless = "8ec90003-f315-4f60-9fb8-838830daea50"
    /// 60 kB: 15 Secure DFU objects of 4 KiB, so progress has room to be seen and a drop at 40 % is mid-image.
    static let image: [UInt8] = (0..<60_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 7) }
    static let package = DFUPackageBuilder.application(firmware: image, firmwareVersion: 20200)

    static func sha256(_ bytes: [UInt8]) -> String { DFUPackageFile.sha256(of: bytes) }

    /// A gateway with the band, `dfu.dir` holding `files`, and `allow.dfu` as given. Returns the folder to remove.
    static func started(options: [String: SimulationOptionValue] = [:], files: [String: [UInt8]] = ["carexc-2.2.0.zip": package],
                        allow: Bool = true) async throws -> (GatewayHarness, TemporaryDirectory) {
        let folder = try TemporaryDirectory(prefix: "wear2mqtt-dfu")
        for (name, bytes) in files { try Data(bytes).write(to: URL(fileURLWithPath: folder.file(name))) }
        let gateway = try GatewayHarness(configuration: """
        devices:
          - address: "\(band)"
            name: band
        dfu:
          dir: \(folder.path)
          max_mb: 1
        allow:
          dfu: \(allow)
        """)
        try gateway.addDevice("gofit_care_xc", address: band, options: options.merging(["history_days": .int(0)]) { $1 })
        await gateway.start()
        #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("band")?["connection"]?.text == "connected" })
        return (gateway, folder)
    }

    static func dfu(_ gateway: GatewayHarness, file: String = "carexc-2.2.0.zip", sha256: String = sha256(package)) async -> [String: DeviceValue]? {
        await gateway.request("band/request/dfu", #"{"file":"\#(file)","sha256":"\#(sha256)"}"#)
    }

    static func error(_ response: [String: DeviceValue]?) -> (code: String?, vendor: Int64?) {
        (response?["error"]?["code"]?.text, response?["error"]?["vendor_code"]?.integer)
    }

    static func update(_ gateway: GatewayHarness) -> DeviceValue? { gateway.last("band")?["update"] }

    static func progressSeen(_ gateway: GatewayHarness) -> [Double] {
        gateway.all("band").compactMap { $0["update"]?["progress"]?.number }
    }

    @Test("a wrong SHA-256, paths outside dfu.dir, bad packages and malformed requests send nothing to the band")
    func refusedPackagesSendNothing() async throws {
        var corrupt = Self.package
        corrupt[corrupt.count / 2] ^= 0xFF
        let big = [UInt8](repeating: 0, count: 1_100_000)
        let (gateway, folder) = try await Self.started(files: [
            "carexc-2.2.0.zip": Self.package, "not-a-zip.zip": Array("firmware".utf8), "corrupt.zip": corrupt, "big.zip": big,
        ])
        await withStopping(gateway, { await $0.stop(); folder.remove() }) { gateway in
            let mismatch = await Self.dfu(gateway, sha256: String(repeating: "ab", count: 32))
            #expect(Self.error(mismatch).code == "INVALID_VALUE")
            let message = mismatch?["error"]?["message"]?.text ?? ""
            #expect(message.contains("SHA-256") && message.contains("nothing was sent"), "\(message)")

            let refused: [(String, String)] = [
                ("../carexc-2.2.0.zip", Self.sha256(Self.package)), ("/etc/passwd", Self.sha256(Self.package)),
                ("nope.zip", Self.sha256(Self.package)), ("not-a-zip.zip", Self.sha256(Array("firmware".utf8))),
                ("corrupt.zip", Self.sha256(corrupt)), ("big.zip", Self.sha256(big)),
            ]
            for (file, sha) in refused {
                let answer = await Self.dfu(gateway, file: file, sha256: sha)
                #expect(Self.error(answer).code == "INVALID_VALUE", "\(file): \(String(describing: answer))")
            }
            let payloads: [(String, String)] = [
                ("{not json", "INVALID_PAYLOAD"),
                (#"{"file":5,"sha256":"\#(Self.sha256(Self.package))"}"#, "INVALID_VALUE"),
                (#"{"file":"carexc-2.2.0.zip"}"#, "INVALID_VALUE"),
                (#"{"file":"carexc-2.2.0.zip","sha256":"00"}"#, "INVALID_VALUE"),
            ]
            for (payload, code) in payloads {
                #expect(Self.error(await gateway.request("band/request/dfu", payload)).code == code, "\(payload)")
            }
            #expect(Self.error(await gateway.request("ghost/request/dfu", #"{"file":"carexc-2.2.0.zip","sha256":"\#(Self.sha256(Self.package))"}"#)).code
                    == "DEVICE_NOT_FOUND")
            #expect(Self.error(await gateway.request("band/request/dfu/cancel", #"{"now":true}"#)).code == "INVALID_VALUE")
            #expect(await gateway.request("band/request/dfu/cancel")?["data"]?["cancelled"]?.flag == false)

            // Nothing reached the band: no write to its buttonless characteristic, it is still its application.
            #expect(gateway.central.writes(to: Self.address).filter { $0.characteristic == Self.buttonless }.isEmpty)
            let shown = await gateway.central.inspect(Self.address)
            #expect(shown["dfu_mode"] == "application" && shown["dfu_bytes_received"] == "0" && shown["firmware"] == "2.1.0")
            #expect(Self.update(gateway) == nil, "no update was ever in the state")
            #expect(gateway.last("band")?["connection"]?.text == "connected")
        }
    }

    @Test("an update is FORBIDDEN unless allow.dfu is set")
    func forbiddenUnlessAllowed() async throws {
        let (gateway, folder) = try await Self.started(allow: false)
        await withStopping(gateway, { await $0.stop(); folder.remove() }) { gateway in
            #expect(Self.error(await Self.dfu(gateway)).code == "FORBIDDEN")
            #expect(await gateway.central.inspect(Self.address)["dfu_bytes_received"] == "0")
        }
    }

    @Test("a link dropped at 40 % is resumed from what the bootloader reports and the update completes")
    func dropAt40PercentIsResumed() async throws {
        let (gateway, folder) = try await Self.started(options: ["dfu_drop_at": .double(0.4)])
        try await withStopping(gateway, { await $0.stop(); folder.remove() }) { gateway in
            let answer = try #require(await Self.dfu(gateway))
            #expect(answer["status"]?.text == "ok", "\(answer)")
            #expect(answer["data"]?["firmware"]?.text == "2.2.0")
            let shown = await gateway.central.inspect(Self.address)
            #expect(shown["dfu_injected_drops"] == "1" && shown["dfu_updates"] == "1" && shown["firmware"] == "2.2.0")
            // At most one 4 KiB object sent again, not the 24 kB before it.
            let received = try #require(Int(shown["dfu_bytes_received"] ?? ""))
            #expect(received >= Self.image.count && received - Self.image.count <= 4_096, "received \(received)")
            let progress = Self.progressSeen(gateway)
            #expect(progress.contains { $0 >= 35 && $0 < 100 }, "progress seen: \(progress)")
            #expect(progress == progress.sorted(), "progress never goes back across the drop: \(progress)")
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("band")?["firmware"]?.text == "2.2.0" })
        }
    }

    @Test("a rejected object ends in DFU_FAILED with the bootloader's code; the next request goes to the waiting bootloader")
    func rejectedObject() async throws {
        // 0x0B0C: EXT_ERROR with extended error VERIFICATION_FAILED, on the first data object's Execute.
        let (gateway, folder) = try await Self.started(options: ["dfu_reject": .int(0x0B0C)])
        try await withStopping(gateway, { await $0.stop(); folder.remove() }) { gateway in
            let failure = Self.error(await Self.dfu(gateway))
            #expect(failure.code == "DFU_FAILED" && failure.vendor == 0x0B0C)
            #expect(await gateway.until { Self.update(gateway)?["state"]?.text == "idle" && Self.update(gateway)?["error"]?["vendor_code"]?.integer == 0x0B0C })
            let shown = await gateway.central.inspect(Self.address)
            #expect(shown["dfu_updates"] == "0" && shown["firmware"] == "2.1.0" && shown["dfu_mode"] == "bootloader")

            let retried = try #require(await Self.dfu(gateway))
            #expect(retried["data"]?["firmware"]?.text == "2.2.0", "\(retried)")
            #expect(await gateway.until(timeout: .seconds(60)) {
                gateway.last("band")?["firmware"]?.text == "2.2.0" && Self.update(gateway)?["error"] == nil
            })
        }
    }

    @Test("an update scheduled while the band is away runs when it returns, even after a restart of the gateway")
    func scheduledUpdateOutlivesARestart() async throws {
        let (gateway, folder) = try await Self.started()
        defer { folder.remove() }
        await gateway.central.setInRange(Self.address, false)
        #expect(await gateway.until { gateway.last("band")?["connection"]?.text != "connected" })
        let answer = try #require(await Self.dfu(gateway))
        #expect(answer["data"]?["update"]?.text == "scheduled", "\(answer)")
        #expect(await gateway.until { Self.update(gateway)?["state"]?.text == "scheduled" })
        #expect(Self.error(await Self.dfu(gateway)).code == "BUSY", "a second request while one waits")

        // The schedule is kept in the state directory: a restarted gateway still has it.
        try await withStopping(gateway.restarted()) { restarted in
            #expect(await gateway.central.inspect(Self.address)["dfu_bytes_received"] == "0", "nothing ran while the band was away")
            await gateway.central.setInRange(Self.address, true)
            #expect(await restarted.until(timeout: .seconds(60)) {
                Self.update(restarted)?["state"]?.text == "idle" && restarted.last("band")?["firmware"]?.text == "2.2.0"
            })
            #expect(await gateway.central.inspect(Self.address)["dfu_updates"] == "1")
        }
    }

    @Test("a cancelled update stops with DFU_FAILED; the next one finds the band in its bootloader and resumes")
    func cancelledUpdateResumes() async throws {
        let (gateway, folder) = try await Self.started()
        try await withStopping(gateway, { await $0.stop(); folder.remove() }) { gateway in
            // Slow the bootloader's answers so the update is still running when the cancel arrives.
            gateway.central.setLatency(Self.bootloader, .milliseconds(15))
            let running = Task { await Self.dfu(gateway) }
            #expect(await gateway.until(timeout: .seconds(60)) { (Self.update(gateway)?["progress"]?.number ?? 0) >= 10 })
            let cancelled = await gateway.request("band/request/dfu/cancel")
            #expect(cancelled?["data"]?["was"]?.text == "updating", "\(String(describing: cancelled))")
            #expect(Self.error(await running.value).code == "DFU_FAILED")
            let partial = try #require(Int(await gateway.central.inspect(Self.address)["dfu_bytes_received"] ?? ""))
            #expect(partial > 0 && partial < Self.image.count)

            gateway.central.setLatency(Self.bootloader, nil)
            let resumed = try #require(await Self.dfu(gateway))
            #expect(resumed["data"]?["firmware"]?.text == "2.2.0", "\(resumed)")
            let received = try #require(Int(await gateway.central.inspect(Self.address)["dfu_bytes_received"] ?? ""))
            #expect(received - Self.image.count <= 4_096, "received \(received)")
        }
    }

    @Test("a band without Nordic DFU answers NOT_SUPPORTED and stays connected")
    func withoutNordicDFU() async throws {
        let (gateway, folder) = try await Self.started(options: ["dfu": .string("none")])
        await withStopping(gateway, { await $0.stop(); folder.remove() }) { gateway in
            #expect(Self.error(await Self.dfu(gateway)).code == "NOT_SUPPORTED")
            #expect(await gateway.until { gateway.last("band")?["connection"]?.text == "connected" })
        }
    }

    @Test("bridge/request/firmware/list lists dfu.dir's packages with the SHA-256 request/dfu needs, versions, and why a file is unusable")
    func firmwareList() async throws {
        let (gateway, folder) = try await Self.started(files: ["carexc-2.2.0.zip": Self.package, "notes.zip": Array("x".utf8),
                                                               "readme.txt": Array("y".utf8)])
        try await withStopping(gateway, { await $0.stop(); folder.remove() }) { gateway in
            let answer = try #require(await gateway.request("bridge/request/firmware/list"))
            let packages = try #require(answer["data"]?["packages"]?.list)
            #expect(packages.compactMap { $0["file"]?.text } == ["carexc-2.2.0.zip", "notes.zip"], "zips only, sorted")
            let good = packages[0]
            #expect(good["sha256"]?.text == Self.sha256(Self.package))
            #expect(good["firmware"]?.text == "2.2.0")
            #expect(good["images"]?.list?.first?["kind"]?.text == "application")
            #expect(good["error"] == nil)
            #expect(packages[1]["error"]?.text?.isEmpty == false)
            // The SHA-256 it lists is the one request/dfu takes.
            let update = await Self.dfu(gateway, sha256: try #require(good["sha256"]?.text))
            #expect(update?["data"]?["firmware"]?.text == "2.2.0", "\(String(describing: update))")
            #expect(Self.error(await gateway.request("bridge/request/firmware/list", #"{"all":true}"#)).code == "INVALID_VALUE")
        }
    }

    @Test("Home Assistant's update entity offers the package named for the band and installing it updates the band")
    func updateEntityInstalls() async throws {
        let (gateway, folder) = try await Self.started()
        try await withStopping(gateway, { await $0.stop(); folder.remove() }) { gateway in
            let topic = "homeassistant/device/wear2mqtt_wear2mqtt_c0f170000001/config"
            func update() -> DeviceValue? { gateway.sink.retained(topic).flatMap { GatewayHarness.object($0.payload) }?["cmps"]?["firmware"] }
            #expect(await gateway.until(timeout: .seconds(60)) { update()?["payload_install"] != nil })
            let install = try #require(update()?["payload_install"]?.text)
            #expect(install.contains(Self.sha256(Self.package)))
            #expect(await gateway.request("band/request/dfu", install)?["data"]?["firmware"]?.text == "2.2.0")
            // Nothing newer is left to offer: the latest version is what the band runs.
            #expect(await gateway.until(timeout: .seconds(60)) { update()?["payload_install"] == nil })
        }
    }
}
