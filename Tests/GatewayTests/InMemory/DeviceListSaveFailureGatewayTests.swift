import Foundation
import Gateway
import Testing
import Wear2MQTTTesting
import Wearables

/// A state folder that cannot take the device list (full, read-only, broken): every bridge request that would
/// change the list is refused with `INTERNAL` and the cause, and nothing changes, so what a request was answered
/// ok for survives a restart (issue 24; the real full disk is `Tests/EndToEndTests/FaultDiskFullTests`). Here a
/// folder in the place of the list's temporary file makes every save fail.
@Suite("Gateway in memory: a device list that cannot be saved refuses changes")
struct DeviceListSaveFailureGatewayTests {
    @Test("add, rename, remove and options are refused with INTERNAL and the cause while the list cannot be saved; accepted once it can")
    func changesAreRefusedUntilTheListCanBeSaved() async throws {
        let gateway = try GatewayHarness(configuration: GatewayContractTests.devices)
        try gateway.addDevice("heart_rate_strap", address: GatewayContractTests.strap)
        try gateway.addDevice("key_finder", address: GatewayContractTests.finder)
        await gateway.start()
        try await withStopping(gateway) { gateway in
            let blocker = gateway.stateDirectory.file("devices.json.tmp")
            try FileManager.default.createDirectory(atPath: blocker, withIntermediateDirectories: true)

            let tag = "C0:FF:EE:00:00:42"
            let refused = [
                ("device/add", #"{"address":"\#(tag)","driver":"standard","name":"tag"}"#),
                ("device/rename", #"{"id":"finder","name":"keys"}"#),
                ("device/remove", #"{"id":"finder"}"#),
                ("device/options", #"{"id":"strap","options":{"batch_ms":500}}"#),
            ]
            for (command, payload) in refused {
                let answer = await gateway.request("bridge/request/\(command)", payload)
                #expect(GatewayContractTests.code(answer) == "INTERNAL", "\(command): \(String(describing: answer))")
                let message = answer?["error"]?["message"]?.text ?? ""
                #expect(message.contains("cannot be saved") && message.contains("Is a directory"), "\(command): \(message)")
                #expect(!message.contains(gateway.stateDirectory.path), "no path in the answer")
            }
            // Nothing changed: no tag, the finder under its old id, the strap without the option.
            #expect(GatewayContractTests.code(await gateway.request("bridge/request/device/remove", #"{"id":"tag"}"#)) == "DEVICE_NOT_FOUND")
            #expect(GatewayContractTests.code(await gateway.request("bridge/request/device/rename", #"{"id":"keys","name":"k"}"#)) == "DEVICE_NOT_FOUND")
            let manager = try #require(gateway.core.manager)
            #expect((try? await manager.options(id: "finder")) != nil)
            #expect((try? await manager.options(id: "strap"))?.batchMilliseconds == 0)

            try FileManager.default.removeItem(atPath: blocker)
            let added = await gateway.request("bridge/request/device/add", refused[0].1)
            #expect(added?["status"]?.text == "ok", "\(String(describing: added))")
            let saved = try String(contentsOfFile: gateway.stateDirectory.file("devices.json"), encoding: .utf8)
            #expect(saved.contains(tag))
        }
    }
}
