import Gateway
import MQTT
import Testing
import Wear2MQTTTesting
import Wearables

/// A site looks like one bridge from outside: one `bridge/devices`, `bridge/info` and Home Assistant bridge device
/// (the referee's, for the whole site), and one Home Assistant device per wearable under the site's identity,
/// announced by whichever gateway holds it and kept, not removed, when it moves.
@Suite("Roaming: one bridge and one Home Assistant device per wearable for the whole site")
struct SiteBridgeTopicsTests {
    static let wearable = "homeassistant/device/wear2mqtt_site_test_c0ffee000001/config"
    static let bridge = "homeassistant/device/wear2mqtt_site_test_bridge/config"

    /// The strap's entry in the retained `bridge/devices`.
    func listed(_ site: InMemorySite) -> [String: DeviceValue]? {
        site.retained("test/bridge/devices").flatMap { (try? JSONParser.parse($0.payload))?.list }?
            .compactMap(\.object).first { $0["id"]?.text == "strap" }
    }

    func publishers(_ site: InMemorySite, _ topic: String) -> Set<String> {
        Set(site.messages(on: topic).map(\.from))
    }

    /// Discovery topics of gateway-named devices: a site must publish none.
    func gatewayNamedDiscovery(_ site: InMemorySite) -> [String] {
        ["a", "b", "c"].flatMap { id in
            (site.gateways[id]?.sink.messages ?? []).map(\.topic).filter { $0.hasPrefix("homeassistant/device/wear2mqtt_\(id)_") }
        }
    }

    /// The strap's state as its holder `id` last published it says connected.
    func connected(_ site: InMemorySite, by id: String) -> Bool {
        site.messages(on: "test/strap").last.map {
            $0.from == id && GatewayHarness.object($0.message.payload)?["connection"]?.text == "connected"
        } == true
    }

    @Test func theRefereeListsTheSiteAndTheHolderAnnouncesTheWearableWhereverItIs() async throws {
        try await withStopping(SiteGatewayTests().started(["a": -55, "b": -80, "c": -85])) { site in
            #expect(await site.run(until: { site.gateways["a"]?.core.site?.heldDevices == ["strap"] }))
            #expect(await site.until { connected(site, by: "a") })
            #expect(await site.run(until: {
                listed(site)?["gateway"]?.text == "a" && listed(site)?["connected"]?.flag == true
            }), "\(String(describing: listed(site)))")
            #expect(await site.run(until: { site.retained(Self.wearable) != nil }))
            #expect(publishers(site, Self.wearable) == ["a"])
            #expect(site.retained(Self.bridge) != nil && publishers(site, Self.bridge) == ["a"])

            site.setLevels(of: "strap", ["a": -85, "b": -55, "c": -85])
            #expect(await site.run(until: { site.gateways["b"]?.core.site?.heldDevices == ["strap"] }))
            #expect(await site.until { connected(site, by: "b") })
            #expect(await site.run(until: {
                listed(site)?["gateway"]?.text == "b" && listed(site)?["connected"]?.flag == true
            }), "\(String(describing: listed(site)))")
            #expect(await site.run(until: { publishers(site, Self.wearable).contains("b") }))
            // Moved, never removed: no empty document on the wearable's topic, and Home Assistant keeps one device.
            #expect(!site.messages(on: Self.wearable).contains { $0.message.payload.isEmpty })
            #expect(publishers(site, Self.wearable) == ["a", "b"])
            #expect(publishers(site, "test/bridge/devices") == ["a"])
            #expect(publishers(site, "test/bridge/info") == ["a"])
            #expect(publishers(site, Self.bridge) == ["a"])
            #expect(gatewayNamedDiscovery(site).isEmpty, "\(gatewayNamedDiscovery(site))")
            // Each gateway describes only what it holds.
            let entries = site.retained("test/bridge/site/devices/b").flatMap { try? SiteMessages.deviceEntries($0.payload, gateway: "b") }
            #expect(entries?.map(\.id) == ["strap"])
            #expect(await site.run(until: {
                site.retained("test/bridge/site/devices/a").flatMap { (try? JSONParser.parse($0.payload))?.list }?.isEmpty == true
            }))
        }
    }

    @Test func theNextRefereeTakesTheBridgeTopicsOver() async throws {
        try await withStopping(SiteGatewayTests().started(["a": -80, "b": -55, "c": -85])) { site in
            #expect(await site.run(until: { site.gateways["b"]?.core.site?.heldDevices == ["strap"] }))
            #expect(await site.until { connected(site, by: "b") })
            #expect(await site.run(until: { listed(site)?["gateway"]?.text == "b" && listed(site)?["connected"]?.flag == true }))
            #expect(publishers(site, "test/bridge/devices") == ["a"])
            site.kill("a")
            #expect(await site.run(until: { publishers(site, Self.bridge).contains("b") }))
            #expect(await site.run(until: { publishers(site, "test/bridge/info").contains("b") }))
            #expect(await site.run(until: { publishers(site, "test/bridge/devices").contains("b") }))
            #expect(listed(site)?["gateway"]?.text == "b" && listed(site)?["connected"]?.flag == true)
            #expect(!publishers(site, "test/bridge/devices").contains("c"))
        }
    }

    @Test func aWearableRemovedFromTheSiteLeavesHomeAssistant() async throws {
        try await withStopping(SiteGatewayTests().started(["a": -80, "b": -55, "c": -85])) { site in
            #expect(await site.run(until: { site.gateways["b"]?.core.site?.heldDevices == ["strap"] }))
            #expect(await site.until { connected(site, by: "b") })
            #expect(await site.run(until: { site.retained(Self.wearable) != nil && publishers(site, Self.wearable) == ["b"] }))
            site.publish(OutgoingMessage(topic: "test/bridge/request/device/remove", text: #"{"id":"strap","transaction":"rm"}"#))
            #expect(await site.run(until: { site.retained(Self.wearable) == nil }))
            #expect(await site.run(until: {
                site.retained("test/bridge/devices").flatMap { (try? JSONParser.parse($0.payload))?.list } == []
            }))
        }
    }
}
