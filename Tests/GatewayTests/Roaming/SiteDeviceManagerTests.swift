import BlueZ
import Foundation
@testable import Gateway
import Testing
import Wear2MQTTTesting
import Wearables

/// The device manager in a site (docs/roaming.md): it manages every device but connects only those it holds, takes
/// what a previous owner handed over, and gives its own entries back when it lets a device go.
@Suite("Roaming: the device manager holds only what it owns")
struct SiteDeviceManagerTests {
    static let strap = "C0:FF:EE:00:00:01"

    func started(roaming: Bool = true) async throws -> GatewayHarness {
        let gateway = try GatewayHarness(configuration: """
        devices:
          - address: "\(Self.strap)"
            driver: standard
            name: strap
        roaming:
          enabled: \(roaming)
        """)
        try gateway.addDevice("heart_rate_strap", address: Self.strap)
        await gateway.start()
        return gateway
    }

    func syncEntryPath(_ gateway: GatewayHarness, _ name: String) -> String {
        gateway.stateDirectory.path + "/drivers/c0ffee000001/\(name).json"
    }

    @Test func aSiteDeviceIsManagedButNotConnectedUntilHeldThenReleasedWithItsEntries() async throws {
        try await withStopping(started()) { gateway in
            let manager = try #require(gateway.core.manager)
            let address = try #require(BluetoothAddress(Self.strap))
            #expect(await manager.holdsOnlyAssigned)
            #expect(await manager.managedDevices.map(\.id) == ["strap"])
            #expect(await manager.session(id: "strap") == nil)
            #expect(gateway.central.connectionCount(address) == 0)
            // A request for it before it is held here (its handover under way) is DEVICE_DISCONNECTED, not unknown.
            do throws(CommandError) {
                _ = try await manager.execute(.refresh, id: "strap")
                Issue.record("a device not held here ran a command")
            } catch {
                #expect(error.code == .deviceDisconnected, "\(error)")
            }

            let handed: [String: [String: DeviceValue]] = ["sync": ["cursor": .integer(4711)], "credentials": ["key": .text("00ff")]]
            await manager.hold(id: "strap", storage: handed)
            // Held by the manager alone (the site's coordinator never assigned it here), so the gateway publishes nothing
            // for it (only a site's owner writes a device's topics): the session is what shows the hold.
            let session = try #require(await manager.session(id: "strap"))
            #expect(await session.linkUp.wait(until: gateway.time.now + .seconds(60)), "the held strap's link came up")
            #expect(await manager.connectionState(id: "strap") == .connected)
            #expect(FileManager.default.fileExists(atPath: syncEntryPath(gateway, "sync")))

            let kept = await manager.release(id: "strap", sharingCredentials: false, commitWait: .seconds(1))
            #expect(kept == ["sync": ["cursor": .integer(4711)]])
            #expect(await manager.session(id: "strap") == nil)
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.central.model.device(address: address)?.connected == false })
            #expect(await manager.release(id: "strap", sharingCredentials: true, commitWait: .seconds(1)) == handed)
        }
    }

    @Test func aLoneGatewayConnectsEveryManagedDeviceAsBefore() async throws {
        try await withStopping(started(roaming: false)) { gateway in
            #expect(await gateway.core.manager?.holdsOnlyAssigned == false)
            #expect(gateway.core.site == nil)
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap/availability")?["state"]?.text == "online" })
            #expect(await gateway.until(timeout: .seconds(60)) { components(gateway)?["connection"] != nil })
            #expect(components(gateway)?["presence"] == nil)
        }
    }

    /// A lone gateway names the device by its gateway id; a site by its base topic, whichever gateway announces it.
    static func discovery(site: Bool) -> String {
        "homeassistant/device/wear2mqtt_\(site ? "site_test" : "wear2mqtt")_c0ffee000001/config"
    }

    func components(_ gateway: GatewayHarness) -> [String: DeviceValue]? {
        gateway.sink.retained(Self.discovery(site: gateway.core.site != nil)).flatMap { GatewayHarness.object($0.payload) }?["cmps"]?.object
    }

    /// In a site every wearable has a Room entity from its `presence`, available with the bridge whichever gateway
    /// holds the device.
    @Test func aSiteWearableHasARoomEntity() async throws {
        // A site of one: the gateway announces the wearable once its own referee gives it the strap.
        let site = try InMemorySite(ids: ["a"], configuration: SiteGatewayTests.configuration)
        let gateway = try #require(site.gateways["a"])
        try gateway.addDevice("heart_rate_strap", address: Self.strap)
        site.setLevels(of: "strap", ["a": -60])
        await site.start("a")
        try await withStopping(site) { site in
            #expect(await site.run(until: { gateway.core.site?.heldDevices == ["strap"] }))
            #expect(await site.until(timeout: .seconds(60)) { gateway.last("strap")?["connection"]?.text == "connected" })
            #expect(await site.run(until: { components(gateway)?["presence"] != nil }))
            let room = try #require(components(gateway)?["presence"]?.object)
            #expect(room["p"]?.text == "sensor" && room["state_topic"]?.text == "test/strap/presence")
            #expect(room["json_attributes_topic"]?.text == "test/strap/presence")
            #expect(room["availability"]?.list?.first?["topic"]?.text == "test/bridge/state")
        }
    }
}
