import BlueZ
import Firmware
import Foundation
import Gateway
import SimulatedWearables
import Testing
import Wear2MQTTTesting
import Wearables

/// `request/dfu` of a package made as InfiniTime's releases are (`adafruit-nrfutil dfu genpkg --dev-type 0x0052`),
/// through the simulated watch's Legacy DFU, which its application serves itself: no bootloader to reboot into.
@Suite("Gateway in memory: InfiniTime firmware update")
struct InfiniTimeFirmwareUpdateGatewayTests {
    static let watch = "C7:1E:00:00:00:02"
    static let address = BluetoothAddress(watch)!
    /// An MCUBoot image: the header's magic, the rest of its 32 bytes, then 12 kB of "firmware".
    static let image: [UInt8] = [0x3D, 0xB8, 0xF3, 0x96] + Array(repeating: 0, count: 28)
        + (0..<12_000).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ $0 >> 5) }

    static func started(files: [String: [UInt8]]) async throws -> (GatewayHarness, TemporaryDirectory) {
        let folder = try TemporaryDirectory(prefix: "wear2mqtt-infinitime-dfu")
        for (name, bytes) in files { try Data(bytes).write(to: URL(fileURLWithPath: folder.file(name))) }
        let gateway = try GatewayHarness(configuration: """
        devices:
          - address: "\(watch)"
            name: watch
        dfu:
          dir: \(folder.path)
          max_mb: 1
        allow:
          dfu: true
        """)
        try gateway.addDevice("pinetime_infinitime", address: watch)
        await gateway.start()
        #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("watch")?["firmware"]?.text == "1.16.0" })
        return (gateway, folder)
    }

    static func dfu(_ gateway: GatewayHarness, _ file: String, _ bytes: [UInt8]) async -> [String: DeviceValue]? {
        await gateway.request("watch/request/dfu", #"{"file":"\#(file)","sha256":"\#(DFUPackageFile.sha256(of: bytes))"}"#)
    }

    @Test("a release-style package installs in place; the answer says to validate it on the watch")
    func releasePackageInstalls() async throws {
        let package = try await NordicPackageTools.adafruitPackage(application: Self.image, deviceType: 0x0052)
        let (gateway, folder) = try await Self.started(files: ["pinetime-mcuboot-app-dfu-1.16.1.zip": package])
        await withStopping(gateway, { await $0.stop(); folder.remove() }) { gateway in
            let answer = await Self.dfu(gateway, "pinetime-mcuboot-app-dfu-1.16.1.zip", package)
            #expect(answer?["status"]?.text == "ok", "\(String(describing: answer))")
            #expect(answer?["data"]?["bytes"]?.integer == Int64(Self.image.count))
            #expect(answer?["data"]?["next_step"]?.text?.contains("alidate") == true, "\(String(describing: answer))")
            let watch = await gateway.central.inspect(Self.address)
            #expect(watch["dfu_updates"] == "1")
            #expect(watch["dfu_bytes_received"] == String(Self.image.count))
            // genpkg's default version (0xFFFFFFFF) says nothing, so the simulated watch marks the build it runs.
            #expect(answer?["data"]?["firmware"]?.text == "1.16.0+dfu.1")
            #expect(await gateway.until { gateway.last("watch")?["firmware"]?.text == "1.16.0+dfu.1" })
        }
    }

    @Test("a package for another device type is refused by the watch: DFU_FAILED, nothing installed")
    func otherDeviceTypeRefused() async throws {
        let package = try await NordicPackageTools.adafruitPackage(application: Self.image, deviceType: 0x0051)
        let (gateway, folder) = try await Self.started(files: ["other.zip": package])
        await withStopping(gateway, { await $0.stop(); folder.remove() }) { gateway in
            let answer = await Self.dfu(gateway, "other.zip", package)
            #expect(answer?["error"]?["code"]?.text == "DFU_FAILED", "\(String(describing: answer))")
            #expect(await gateway.central.inspect(Self.address)["dfu_updates"] == "0")
        }
    }
}
