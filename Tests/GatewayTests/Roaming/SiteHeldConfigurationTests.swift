import BlueZ
import Gateway
import MQTT
import Testing
import Wear2MQTTTesting
import Wearables

/// A held configuration (`request/configure`, re-applied on every connection) follows the device: the holder that
/// took the request writes it to the site's registry, every gateway adopts it, and the next holder applies it when
/// it connects — also when the holder is not the referee, and without the referee putting its older copy back.
@Suite("Roaming: a held configuration follows the device")
struct SiteHeldConfigurationTests {
    static let frames = "B0:5E:00:00:00:01"

    @Test func boseSensorsConfiguredOnOneGatewayAreConfiguredByTheNext() async throws {
        let site = try InMemorySite(ids: ["a", "b", "c"], configuration: """
        devices:
          - address: "\(Self.frames)"
            driver: bose
            name: frames
        \(SiteGatewayTests.roaming)
        """)
        for gateway in site.gateways.values { try gateway.addDevice("bose_frames", address: Self.frames) }
        // b holds the frames first: not the referee (a is).
        site.setLevels(of: "frames", ["a": -85, "b": -55, "c": -80])
        for id in ["a", "b", "c"] { await site.start(id) }
        await withStopping(site) { site in
            func state() -> [String: DeviceValue]? { site.retained("test/frames").flatMap { GatewayHarness.object($0.payload) } }
            #expect(await site.run(until: { site.gateways["b"]?.core.site?.heldDevices == ["frames"] }))
            #expect(await site.until { state()?["capabilities"] != nil })
            site.publish(OutgoingMessage(topic: "test/frames/request/configure",
                                         text: #"{"sensors":{"accelerometer":{"period_ms":40}},"transaction":"cfg"}"#))
            #expect(await site.settled())
            #expect(site.messages(on: "test/frames/response/configure").first.flatMap { GatewayHarness.object($0.message.payload) }?["status"]?.text == "ok")
            // Every gateway adopts the configuration from the registry, the referee included, and it stays.
            func configured(_ id: String) async -> Bool {
                await site.gateways[id]?.core.manager?.managedDevices.first?.configure?["sensors"]?["accelerometer"]?["period_ms"]?.integer == 40
            }
            for id in ["a", "b", "c"] {
                #expect(await site.run(until: { await configured(id) }), "gateway \(id) has the configuration")
            }
            #expect(await site.advance(by: .seconds(1)))
            for id in ["a", "b", "c"] { #expect(await configured(id), "gateway \(id) still has it after four reports") }

            // The wearer walks to c: c connects the frames and applies the configuration itself.
            site.setLevels(of: "frames", ["a": -85, "b": -85, "c": -55])
            #expect(await site.run(until: { site.gateways["c"]?.core.site?.heldDevices == ["frames"] }))
            #expect(await site.until {
                site.messages(on: "test/frames/sensor/accelerometer").contains { $0.from == "c" }
            }, "c streams the accelerometer it was never asked for")
        }
    }
}
