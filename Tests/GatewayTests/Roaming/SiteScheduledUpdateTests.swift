import BlueZ
import Firmware
import Foundation
import Gateway
import MQTT
import SimulatedWearables
import Testing
import Wear2MQTTTesting
import Wearables

/// A firmware update scheduled while a band is out of everyone's reach follows the band: the owner keeps it in the
/// band's entries, hands it over with them, and the gateway the band returns to runs it (docs/roaming.md, Handover).
@Suite("Roaming: a scheduled firmware update follows the band")
struct SiteScheduledUpdateTests {
    static let band = "C0:F1:70:00:00:01"
    static let address = BluetoothAddress(band)!

    @Test func anUpdateScheduledOnTheOwnerRunsOnTheGatewayTheBandReturnsTo() async throws {
        let folder = try TemporaryDirectory(prefix: "wear2mqtt-dfu")
        defer { folder.remove() }
        let package = FirmwareGatewayTests.package
        try Data(package).write(to: URL(fileURLWithPath: folder.file("carexc-2.2.0.zip")))
        let site = try InMemorySite(ids: ["a", "b", "c"], configuration: """
        devices:
          - address: "\(Self.band)"
            name: band
            driver: gofit
        dfu:
          dir: \(folder.path)
          max_mb: 1
        allow:
          dfu: true
        \(SiteGatewayTests.roaming)
        """)
        // One band per gateway's central (the same seed, so the same band): what travels is the gateway's schedule,
        // and each simulated band's switch to its bootloader is watched by one central.
        for gateway in site.gateways.values { try gateway.addDevice("gofit_care_xc", address: Self.band, options: ["history_days": .int(0)]) }
        // Only a hears the band at first, so when a loses it nobody else has heard it lately and a keeps it (had b
        // heard it within `lost_after_s`, the referee would give it to b at once, and b would schedule the update).
        site.setLevels(of: "band", ["a": -55])
        for id in ["a", "b", "c"] { await site.start(id) }
        try await withStopping(site) { site in
            let a = try #require(site.gateways["a"]), b = try #require(site.gateways["b"])
            func state() -> [String: DeviceValue]? { site.retained("test/band").flatMap { GatewayHarness.object($0.payload) } }
            #expect(await site.run(until: { a.core.site?.heldDevices == ["band"] }))
            #expect(await site.until { state()?["connection"]?.text == "connected" })

            // The wearer leaves: nobody hears the band, a keeps it (no one else can have it) with its link down.
            site.setLevels(of: "band", [:])
            for gateway in site.gateways.values { await gateway.central.setInRange(Self.address, false) }
            #expect(await site.until { a.last("band")?["connection"]?.text != "connected" })
            site.publish(OutgoingMessage(topic: "test/band/request/dfu", text: """
            {"file":"carexc-2.2.0.zip","sha256":"\(DFUPackageFile.sha256(of: package))","transaction":"u"}
            """))
            #expect(await site.until {
                site.messages(on: "test/band/response/dfu").first.flatMap { GatewayHarness.object($0.message.payload) }?["data"]?["update"]?.text == "scheduled"
            })
            #expect(site.messages(on: "test/band/response/dfu").map(\.from) == ["a"])

            // It comes back in b's room.
            await b.central.setInRange(Self.address, true)
            site.setLevels(of: "band", ["b": -55])
            #expect(await site.run(until: { b.core.site?.heldDevices == ["band"] }))
            let handoff = try #require(site.retained("test/bridge/site/handoff/band").map { try SiteMessages.handoff($0.payload) })
            #expect(handoff.from == "a" && handoff.storage.keys.contains { $0.contains("update") }, "\(handoff.storage.keys.sorted())")
            #expect(await site.until(timeout: .seconds(60)) {
                state()?["firmware"]?.text == "2.2.0" && state()?["update"]?["state"]?.text == "idle"
            }, "\(String(describing: state()))")
            #expect(await b.central.inspect(Self.address)["dfu_updates"] == "1")
            let updaters = Set(site.messages(on: "test/band").filter {
                GatewayHarness.object($0.message.payload)?["update"]?["state"]?.text == "updating"
            }.map(\.from))
            #expect(updaters == ["b"])
        }
    }
}
