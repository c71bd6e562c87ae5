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

    @Test func otherGatewaysHearTheStrapWithoutWritingItsStateAndAReleaseNeverRetainsOffline() async throws {
        let (site, walker) = try await SiteGatewayTests().started(["a": -55, "b": -80, "c": -85])
        try await withStopping(site, { walker.stop(); await $0.stop() }) { site in
            #expect(await eventually(timeout: .seconds(30)) {
                SiteGatewayTests().owner(site)?.gateway == "a" && state(site)?["connection"]?.text == "connected"
            })
            // b and c hear the strap, at levels that move: what they hear goes into their site reports only.
            let address = try #require(BluetoothAddress(SiteGatewayTests.strap))
            for rssi in [-70, -58, -77, -62, -81] {
                site.gateways["b"]?.central.setRSSI(address, rssi)
                site.gateways["c"]?.central.setRSSI(address, rssi - 6)
                _ = await eventually(timeout: .milliseconds(300)) { false }
            }
            let writers = Set(site.messages(on: "test/strap").map(\.from) + site.messages(on: "test/strap/availability").map(\.from))
            #expect(writers == ["a"], "\(writers)")
            #expect(state(site)?["connection"]?.text == "connected")

            // The wearer walks to b: b's online is the last word, and a's release says nothing after it.
            walker.set(["a": -85, "b": -55, "c": -85])
            #expect(await eventually(timeout: .seconds(30)) {
                site.messages(on: "test/strap/availability").last.map { $0.from == "b" && $0.message.payload == Array(#"{"state":"online"}"#.utf8) } == true
            })
            _ = await eventually(timeout: .seconds(2)) { false }
            let availability = site.messages(on: "test/strap/availability")
            let firstFromB = try #require(availability.firstIndex { $0.from == "b" })
            #expect(!availability[firstFromB...].contains { $0.from == "a" }, "\(availability.map { "\($0.from) \(String(decoding: $0.message.payload, as: UTF8.self))" })")
            #expect(site.retained("test/strap/availability")?.payload == Array(#"{"state":"online"}"#.utf8))
            #expect(state(site)?["connection"]?.text == "connected")
        }
    }
}
