import Firmware
import Foundation
import Simulator
import Testing
import Wear2MQTTTesting
import Wearables
import SimulatedWearables

/// A PineTime with InfiniTime through the whole product: the simulator serves the watch's documented GATT table
/// over D-Bus, the gateway picks the `infinitime` driver from the advertisement, sets the clock, streams steps and
/// motion, pushes a notification the watch shows, turns the watch's buttons into events, and updates its firmware
/// with a package made as InfiniTime's releases are.
@Suite
struct InfiniTimeEndToEndTests {
    static let watch = "C7:1E:00:00:00:0E"
    static let image: [UInt8] = [0x3D, 0xB8, 0xF3, 0x96] + Array(repeating: 0, count: 28)
        + (0..<8_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 6) }

    static let scenarioDevices = """
      - kind: pinetime_infinitime
        address: \(watch)
        advertising_interval: 100ms
        options: { firmware: "1.16.0", steps: 4000 }
    """
    static let configuredDevices = "  - { address: \"\(watch)\", name: wrist }"

    func samples(_ stack: Stack, _ topic: String) -> [[String: Any]] {
        stack.payloads(topic).compactMap(stack.json).filter { $0["ts"] != nil }
    }

    @Test func theWatchIsSetStreamsShowsANotificationRaisesItsButtonsAndTakesARelease() async throws {
        let package = try await NordicPackageTools.adafruitPackage(application: Self.image, deviceType: 0x0052)
        let folder = try TemporaryDirectory(prefix: "wear2mqtt-infinitime-e2e")
        defer { folder.remove() }
        try Data(package).write(to: URL(fileURLWithPath: folder.file("pinetime-mcuboot-app-dfu-1.16.1.zip")))
        let extra = """
        dfu:
          dir: \(folder.path)
          max_mb: 1
        allow:
          dfu: true
        """
        try await Stack.with(scenarioDevices: Self.scenarioDevices, configuredDevices: Self.configuredDevices,
                             gatewayExtra: extra) { stack in
            #expect(await stack.until(timeout: .seconds(60)) { stack.payloads("wrist/availability").last == #"{"state":"online"}"# })
            #expect(stack.payloads("bridge/devices").last?.contains(#""driver":"infinitime""#) == true)
            #expect(await stack.until { stack.last("wrist")?["firmware"] as? String == "1.16.0" })

            // The clock and zone were set on connect.
            // Current Time first, then Local Time Information.
            // eventually: what the simulated watch was written, asked over the simulator's control interface.
            #expect(await eventually { (try? await stack.control.inspect(Self.watch))?["time_zone_quarters"] != nil })
            #expect(try await stack.control.inspect(Self.watch)["time_writes"] == "1")

            // Steps count up from the watch's 4000; motion streams in m/s².
            #expect(await stack.until(timeout: .seconds(30)) { samples(stack, "wrist/sensor/steps").count >= 3 })
            let steps = samples(stack, "wrist/sensor/steps").compactMap { $0["steps"] as? Int }
            // The first is the count read on connect: 4000, or a step more if the wearer walked on meanwhile.
            #expect((4000...4010).contains(steps.first ?? 0) && (steps.last ?? 0) > (steps.first ?? 0), "\(steps)")
            #expect(await stack.until { samples(stack, "wrist/sensor/accelerometer").count >= 20 })
            let z = samples(stack, "wrist/sensor/accelerometer").compactMap { $0["z"] as? Double }
            #expect(z.allSatisfy { (-13 ... -5).contains($0) }, "gravity on -z, in m/s²: \(z.prefix(5))")

            // A doorbell on the wrist.
            try await stack.request("wrist/request/notify", #"{"title":"Doorbell","body":"Front door","transaction":"n1"}"#)
            let shown = await stack.response("wrist/response/notify", transaction: "n1")
            #expect(shown?["status"] as? String == "ok", "\(String(describing: shown))")
            let watch = try await stack.control.inspect(Self.watch)
            #expect(watch["notification_title"] == "Doorbell" && watch["notification_body"] == "Front door")

            // A phone call, answered on the watch, and the music app's play button.
            try await stack.request("wrist/request/notify", #"{"body":"Mary","category":"call","transaction":"c1"}"#)
            #expect(await stack.response("wrist/response/notify", transaction: "c1")?["status"] as? String == "ok")
            try await stack.control.raiseEvent(Self.watch, .callAnswer)
            #expect(await stack.until { stack.payloads("wrist/event").contains { $0.contains(#""event":"call""#) && $0.contains(#""action":"answer""#) } })
            try await stack.control.raiseEvent(Self.watch, .musicPlay)
            #expect(await stack.until { stack.payloads("wrist/event").contains { $0.contains(#""event":"music""#) && $0.contains(#""action":"play""#) } })

            // A release-style package, through the Legacy DFU the application serves.
            let sha256 = DFUPackageFile.sha256(of: package)
            try await stack.request("wrist/request/dfu",
                                    #"{"file":"pinetime-mcuboot-app-dfu-1.16.1.zip","sha256":"\#(sha256)","transaction":"u1"}"#)
            let update = await stack.response("wrist/response/dfu", transaction: "u1", timeout: .seconds(120))
            #expect(update?["status"] as? String == "ok", "\(String(describing: update))")
            let data = update?["data"] as? [String: Any]
            #expect(data?["bytes"] as? Int == Self.image.count)
            #expect((data?["next_step"] as? String)?.contains("alidate") == true)
            #expect(try await stack.control.inspect(Self.watch)["dfu_updates"] == "1")
            #expect(await stack.until(timeout: .seconds(60)) { stack.payloads("wrist/availability").last == #"{"state":"online"}"# })
        }
    }
}
