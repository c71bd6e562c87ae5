import BlueZ
import Gateway
import MQTT
import Testing
import Wear2MQTTTesting
import Wearables

/// Issue 38: in a site only the owner writes a wearable's state and availability. Before, the other gateways
/// published `<base>/strap` with `"connection":"disconnected"` and their own RSSI whenever the level they heard moved,
/// and the old owner's release retained `offline` over the new owner's `online`.
@Suite("Roaming: only the owner writes a wearable's topics")
struct SiteOwnerTopicsTests {
    func state(_ site: InMemorySite) -> [String: DeviceValue]? {
        site.retained("test/strap").flatMap { GatewayHarness.object($0.payload) }
    }

    /// The strap's level in `gateway`'s last site report when it heard it once in the interval.
    func reported(_ site: InMemorySite, by gateway: String) -> Double? {
        let report = site.retained("test/bridge/site/sightings/\(gateway)").flatMap { try? SiteMessages.sightingReport($0.payload, gateway: gateway) }
        return report?.report.devices["strap"].flatMap { $0.heard == 1 ? $0.rssi : nil }
    }

    @Test func otherGatewaysHearTheStrapWithoutWritingItsStateAndAReleaseNeverRetainsOffline() async throws {
        try await withStopping(SiteGatewayTests().started(["a": -55, "b": -80, "c": -85])) { site in
            #expect(await site.run(until: { SiteGatewayTests().owner(site)?.gateway == "a" }))
            #expect(await site.until { state(site)?["connection"]?.text == "connected" })
            // b and c hear the strap through their own Bluetooth stacks only, at levels that move: each reading goes
            // into their site reports, and nowhere else.
            site.setLevels(of: "strap", ["a": -55])
            let address = try #require(BluetoothAddress(SiteGatewayTests.strap))
            for rssi in [-70, -58, -77, -62, -81] {
                site.gateways["b"]?.central.setRSSI(address, rssi)
                site.gateways["c"]?.central.setRSSI(address, rssi - 6)
                var reportedBy: Set<String> = []
                #expect(await site.run(until: {
                    for (id, level) in [("b", rssi), ("c", rssi - 6)] where reported(site, by: id) == Double(level) { reportedBy.insert(id) }
                    return reportedBy == ["b", "c"]
                }), "\(rssi) dBm reported by \(reportedBy.sorted())")
            }
            let writers = Set(site.messages(on: "test/strap").map(\.from) + site.messages(on: "test/strap/availability").map(\.from))
            #expect(writers == ["a"], "\(writers)")
            #expect(state(site)?["connection"]?.text == "connected")

            // The wearer walks to b: b's online is the last word, and a's release says nothing after it.
            site.setLevels(of: "strap", ["a": -85, "b": -55, "c": -85])
            #expect(await site.run(until: { site.gateways["b"]?.core.site?.heldDevices == ["strap"] }))
            #expect(await site.until {
                site.messages(on: "test/strap/availability").last.map { $0.from == "b" && $0.message.payload == Array(#"{"state":"online"}"#.utf8) } == true
            })
            // Two seconds of reports after it, a's release long carried out.
            #expect(await site.advance(by: .seconds(2)))
            let availability = site.messages(on: "test/strap/availability")
            let firstFromB = try #require(availability.firstIndex { $0.from == "b" })
            #expect(!availability[firstFromB...].contains { $0.from == "a" }, "\(availability.map { "\($0.from) \(String(decoding: $0.message.payload, as: UTF8.self))" })")
            #expect(site.retained("test/strap/availability")?.payload == Array(#"{"state":"online"}"#.utf8))
            #expect(state(site)?["connection"]?.text == "connected")
        }
    }
}
