import Foundation
import Testing
import Wear2MQTTTesting

/// The built gateway over a simulated ESPHome proxy with a single connection slot and two GoFIT bands only it hears:
/// a band only syncs, so with the default `link: auto` each is connected for a visit through the proxy, syncs its
/// history and gives the slot back, and the other band gets its turn — both served by one slot, both available
/// between visits (docs/radios.md, "Slots given back").
@Suite struct ESPHomeSlotsGivenBackEndToEndTests {
    static let bands = ["C0:F1:70:00:00:71", "C0:F1:70:00:00:81"]
    /// The key the simulated band is paired with by `paired: true` (0x00…0x0F), as the gateway keeps it after pairing.
    static let presetKey = (0..<16).map { String(format: "%02x", $0) }.joined()

    @Test func twoSyncOnlyBandsShareOneSlotByVisits() async throws {
        let directory = try TemporaryDirectory(prefix: "esphome-slots")
        defer { directory.remove() }
        // Both bands already paired with this gateway: their key in the state folder, as device/pair leaves it.
        let state = directory.file("state")
        for address in Self.bands {
            let folder = state + "/drivers/" + address.replacingOccurrences(of: ":", with: "").lowercased()
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            try Data(#"{"key":"\#(Self.presetKey)"}"#.utf8).write(to: URL(fileURLWithPath: folder + "/credentials.json"))
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: state)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: state + "/drivers")
        let port = try FreePort.loopback()
        let scenario = try directory.write("proxy.yaml", "seed: 9\ndevices:\n" + Self.bands.map {
            "  - kind: gofit_care_xc\n    address: \($0)\n    advertising_interval: 100ms\n    options: { paired: true, history_days: 1 }"
        }.joined(separator: "\n") + "\n")
        let executable = URL(fileURLWithPath: GatewayProcess.executablePath).deletingLastPathComponent().appendingPathComponent("wear2mqtt-sim").path
        let proxy = try ChildProcess(executable: executable,
                                     arguments: ["proxy", "--port", "\(port)", "--name", "kitchen", "--slots", "1", "--scenario", scenario],
                                     outputPath: directory.file("proxy.out"), errorPath: directory.file("proxy.err"))
        defer { proxy.signal(SIGKILL) }
        #expect(try await proxy.waitForErrorOutput(timeout: .seconds(60)) { $0.contains("serving ESPHome's API") },
                "\(proxy.errorOutput)")
        try await Stack.with(scenarioDevices: "", configuredDevices: "  - address: \(Self.bands[0])\n    name: band1\n    driver: gofit\n"
                                + "  - address: \(Self.bands[1])\n    name: band2\n    driver: gofit\n",
                             gatewayExtra: "radios:\n  - name: kitchen\n    host: 127.0.0.1\n    port: \(port)\n",
                             stateDirectory: state) { stack in
            func records(_ band: String) -> Int {
                ["steps", "sleep", "heart_rate", "spo2", "activity"].reduce(0) { $0 + stack.payloads("\(band)/fitness/\($1)").count }
            }
            func letGo(_ band: String) -> Bool {
                guard let document = stack.last(band), let link = document["link"] as? [String: Any] else { return false }
                return link["state"] as? String == "idle" && document["connection"] as? String == "disconnected"
                    && (document["sync"] as? [String: Any])?["state"] as? String == "idle"
            }
            // Each band in turn: connected through the proxy's one slot, synced, let go.
            let bothLetGo = await stack.until(timeout: .seconds(150)) { letGo("band1") && letGo("band2") }
            let gatewayLog = bothLetGo ? "" : String(stack.gateway.child.errorOutput.suffix(12000))
            #expect(bothLetGo, "\(stack.payloads("band1").last ?? "-")\n\(stack.payloads("band2").last ?? "-")\n\(proxy.errorOutput)\n\(gatewayLog)")
            #expect(records("band1") > 50)
            #expect(records("band2") > 50)
            for band in ["band1", "band2"] {
                #expect(stack.last("\(band)/availability")?["state"] as? String == "online", "let go on purpose: \(band) is available")
                #expect(stack.payloads(band).contains { $0.contains(#""radio":"kitchen""#) })
            }
            // A command brings a band's link back through the slot, and it is let go again.
            try await stack.request("band1/request/find", #"{"transaction":"find-1","vibrations":2}"#)
            let answer = await stack.response("band1/response/find", transaction: "find-1")
            let found = answer?["status"] as? String == "ok"
            #expect(found, "\(String(describing: answer))\n\(found ? "" : String(stack.gateway.child.errorOutput.suffix(12000)))")
            #expect(await stack.until(timeout: .seconds(60)) { letGo("band1") })
        }
        #expect(proxy.isRunning)
        await proxy.stop()
    }
}
