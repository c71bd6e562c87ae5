import Foundation
import BlueZ
import Gateway
import Testing
import Wear2MQTTTesting
import Wearables

/// Issue 38: a device's state document outlives a restart of the gateway. Before, a restart published
/// `{"connection":"connecting"}` over battery, firmware, identity and `last_seen`.
@Suite("Gateway in memory: state kept across restarts")
struct StateKeptGatewayTests {
    @Test("an away strap's retained state is the same after a restart, and no document published meanwhile is narrower")
    func awayStrapKeepsItsState() async throws {
        let gateway = try await GatewayContractTests().started()
        #expect(await gateway.until(timeout: .seconds(60)) {
            let state = gateway.last("strap")
            return state?["battery"] != nil && state?["firmware"] != nil && state?["connection"]?.text == "connected"
        })
        let strap = try #require(BluetoothAddress(GatewayContractTests.strap))
        await gateway.central.setInRange(strap, false)
        #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap")?["connection"]?.text == "disconnected" })
        let before = try #require(gateway.last("strap"))

        try await withStopping(gateway.restarted()) { restarted in
            // The device list says the strap is still managed: its kept document is back, whole.
            #expect(await restarted.until(timeout: .seconds(30)) { restarted.last("strap") == before })
            for document in restarted.all("strap") {
                #expect(Set(before.keys).isSubset(of: Set(document.keys)), "narrower: \(document)")
                #expect(document["battery"] == before["battery"] && document["last_seen"] == before["last_seen"])
            }
            #expect(restarted.last("strap/availability")?["state"]?.text == "offline")
            // The finder, still in range, reconnects from its kept document too.
            #expect(await restarted.until(timeout: .seconds(60)) { restarted.last("finder")?["connection"]?.text == "connected" })
            #expect(restarted.all("finder").allSatisfy { $0["battery"] != nil }, "\(restarted.all("finder"))")
        }
    }

    @Test("a device added over MQTT comes back with its kept document; a kept device no longer managed is not published")
    func addedDeviceKeepsItsStateAndGhostsStayQuiet() async throws {
        let directory = try TemporaryDirectory()
        // What a former run kept for a device that is managed no more (removed from the list while stopped).
        _ = try directory.write("device-states.json", #"{"version":1,"devices":{"ghost":{"battery":50}}}"#)
        let gateway = try GatewayHarness(configuration: GatewayContractTests.devices, stateDirectory: directory)
        try gateway.addDevice("heart_rate_strap", address: GatewayContractTests.strap)
        try gateway.addDevice("key_finder", address: GatewayContractTests.finder)
        await gateway.start()
        #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("finder")?["battery"] != nil })
        #expect(gateway.all("ghost").isEmpty && gateway.all("ghost/availability").isEmpty)
        let tag = "C0:FF:EE:00:00:42"
        try gateway.addDevice("key_finder", address: tag)
        #expect(await gateway.request("bridge/request/device/add", #"{"address":"\#(tag)","driver":"standard","name":"tag"}"#)?["status"]?.text == "ok")
        #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("tag")?["battery"] != nil })
        let restarted = try await gateway.restarted()
        try await withStopping(restarted, { await $0.stop(); directory.remove() }) { restarted in
            #expect(await restarted.until(timeout: .seconds(60)) { restarted.last("tag")?["connection"]?.text == "connected" })
            #expect(restarted.all("tag").allSatisfy { $0["battery"] != nil })
            #expect(restarted.all("ghost").isEmpty)
            let kept = try String(contentsOfFile: directory.file("device-states.json"), encoding: .utf8)
            #expect(!kept.contains("ghost") && kept.contains("\"tag\""), "\(kept)")
        }
    }
}

/// The kept file's codec (`DeviceStateArchive`): what is kept, what is not, what a damaged file gives.
@Suite("Device state archive")
struct DeviceStateArchiveTests {
    static let document = DeviceStateDocument(fields: [
        "connection": "connected", "battery": 87, "firmware": "1.2.3", "last_seen": .integer(1_750_000_000_000),
        "sync": .object(["state": "syncing", "progress": 40, "remaining_s": 12, "last_ts": .integer(17)]),
        "update": .object(["state": "scheduled"]),
    ])

    @Test("kept without the live connection; back as disconnected, an operation under way as interrupted")
    func roundTrip() throws {
        let bytes = DeviceStateArchive.encode(["band": Self.document])
        #expect(!String(decoding: bytes, as: UTF8.self).contains("connected"))
        let back = try DeviceStateArchive.decode(bytes)
        let band = try #require(back["band"]?.fields)
        #expect(band["connection"] == "disconnected")
        #expect(band["battery"] == 87 && band["firmware"] == "1.2.3" && band["last_seen"] == .integer(1_750_000_000_000))
        #expect(band["sync"] == .object(["state": "interrupted", "progress": 40, "last_ts": .integer(17)]))
        #expect(band["update"] == .object(["state": "scheduled"]), "a resting state stays")
    }

    @Test("every truncation of a kept file is refused as damaged, never half-read")
    func truncations() {
        let bytes = DeviceStateArchive.encode(["band": Self.document, "strap": DeviceStateDocument(fields: ["battery": 5])])
        for length in 0..<bytes.count {
            #expect(throws: DeviceStateArchive.DamagedArchive.self) { try DeviceStateArchive.decode(Array(bytes.prefix(length))) }
        }
    }

    @Test("random bytes and wrong shapes are refused without a crash")
    func randomInput() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try? DeviceStateArchive.decode(bytes)
        }
        for text in [#"[]"#, #"{"version":2,"devices":{}}"#, #"{"version":1}"#, #"{"version":1,"devices":{"../x":{}}}"#,
                     #"{"version":1,"devices":{"band":3}}"#] {
            #expect(throws: DeviceStateArchive.DamagedArchive.self) { try DeviceStateArchive.decode(Array(text.utf8)) }
        }
    }
}
