import Foundation
import Simulator
import Testing
import Wear2MQTTTesting
import Wearables
import SimulatedWearables
import Firmware

/// Firmware updates over the whole product (issue 10, docs/protocols/dfu.md): a package in `dfu.dir` is checked
/// by the gateway, the simulated Care-Xc reboots into its Nordic bootloader at the next address, the gateway sends
/// the image there, and the band comes back with the new Firmware Revision in its state: a Secure and a Legacy
/// update over the bus, and two packages made by Nordic's tools (`NordicPackageTools`: a signed nrfutil package, an
/// adafruit-nrfutil SoftDevice+bootloader+application package). Refusals, drops, rejections, schedules, cancels and
/// the rest of the tool corpus are tested in memory (Tests/GatewayTests/InMemory/FirmwareGatewayTests.swift,
/// FirmwarePackageCorpusTests.swift).
@Suite(.timeLimit(.minutes(4)))
struct FirmwareUpdateEndToEndTests {
    static let band = "C0:F1:70:00:00:01"
    /// 60 kB: 15 Secure DFU objects of 4 KiB, so progress has room to be seen and a drop at 40 % is mid-image.
    static let image: [UInt8] = (0..<60_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 7) }
    /// nrfutil's `--application-version-string 2.2.0`.
    static let securePackage = DFUPackageBuilder.application(firmware: image, firmwareVersion: 20200)
    static let legacyPackage = DFUPackageBuilder.legacyApplication(firmware: image, applicationVersion: 20301)

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
        await stack.until(timeout: .seconds(45)) { state(stack)?["connection"] as? String == "connected" }
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
            #expect(await stack.until { update(stack)?["state"] as? String == "idle" && state(stack)?["firmware"] as? String == "2.2.0" })
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

    @Test func aSignedPackageFromNordicsNrfutilUpdatesTheBandOverSecureDFU() async throws {
        let package = try await NordicPackageTools.nordicPackage(application: Self.image, applicationVersion: 20200, signed: true)
        try await Self.with(files: ["nrfutil-signed.zip": package]) { stack in
            #expect(await connected(stack))
            let answer = try #require(try await dfu(stack, file: "nrfutil-signed.zip", sha256: Self.sha256(package), "n1"))
            #expect(answer["status"] as? String == "ok", "\(answer)")
            #expect((answer["data"] as? [String: Any])?["firmware"] as? String == "2.2.0")
            #expect(await stack.until { state(stack)?["firmware"] as? String == "2.2.0" })
        }
    }

    @Test func anAdafruitNrfutilSoftDeviceBootloaderAndApplicationPackageGoesOverLegacyDFU() async throws {
        let softDevice = (0..<8_192).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ 1) }
        let bootloader = (0..<4_096).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 9) }
        let package = try await NordicPackageTools.adafruitPackage(application: Self.image, applicationVersion: 20301,
                                                             softDevice: softDevice, bootloader: bootloader)
        try await Self.with(options: "dfu: legacy", files: ["adafruit-all.zip": package]) { stack in
            #expect(await connected(stack))
            let answer = try #require(try await dfu(stack, file: "adafruit-all.zip", sha256: Self.sha256(package), "a1"))
            #expect(answer["status"] as? String == "ok", "\(answer)")
            #expect((answer["data"] as? [String: Any])?["firmware"] as? String == "2.3.1")
            #expect((answer["data"] as? [String: Any])?["bytes"] as? Int == softDevice.count + bootloader.count + Self.image.count)
            let shown = try await inspect(stack)
            #expect(shown["dfu_updates"] == "2" && shown["firmware"] == "2.3.1", "\(shown)")
        }
    }

    @Test func aLegacyDFUBandIsUpdatedThroughItsApplicationsDFUService() async throws {
        try await Self.with(options: "dfu: legacy", files: ["legacy.zip": Self.legacyPackage]) { stack in
            #expect(await connected(stack))
            let answer = try #require(try await dfu(stack, file: "legacy.zip", sha256: Self.sha256(Self.legacyPackage), "l1"))
            #expect(answer["status"] as? String == "ok", "\(answer)")
            #expect((answer["data"] as? [String: Any])?["firmware"] as? String == "2.3.1")
            #expect(await stack.until { state(stack)?["firmware"] as? String == "2.3.1" })
        }
    }

}
