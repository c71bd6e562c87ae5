import Foundation
import Gateway
import Testing
import Wearables

/// The descriptions as people and clients read them: docs/devices.md, generated, and each `bridge/devices` entry's
/// `definition`.
@Suite("Driver catalog")
struct DriverCatalogTests {
    static let devicesDocument = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/devices.md")

    @Test("docs/devices.md is what the descriptions say (regenerate: swift run wear2mqtt drivers --markdown > docs/devices.md)")
    func documentIsCurrent() throws {
        let committed = try String(contentsOf: Self.devicesDocument, encoding: .utf8)
        #expect(committed == DriverCatalog.markdown(), "docs/devices.md is stale: run swift run wear2mqtt drivers --markdown > docs/devices.md")
    }

    @Test("every registered driver is in the catalog, with its commands and sensors")
    func everyDriver() throws {
        let json = try #require(try JSONSerialization.jsonObject(with: Data(DriverCatalog.json())) as? [[String: Any]])
        #expect(json.compactMap { $0["driver"] as? String } == WearableDrivers.all.drivers.map { driver in driver.name })
        let markdown = DriverCatalog.markdown()
        for driver in WearableDrivers.all.drivers {
            #expect(markdown.contains("(`\(driver.name)`)"))
            for command in driver.commands { #expect(markdown.contains("| `\(command)` |"), "\(driver.name): \(command)") }
        }
    }

    @Test("bridge/devices gives each entry its driver's definition; a site's own entries leave it out")
    func definitionInBridgeDevices() throws {
        let entry = BridgeDeviceEntry(id: "h10", address: "A0:9E:1A:00:00:01", driver: "polar")
        let definitions = ["polar": PolarDriver.driverDescription.deviceValue]
        let list = try #require(try JSONSerialization.jsonObject(with: Data(BridgePayload.devices([entry], definitions: definitions))) as? [[String: Any]])
        let definition = try #require(list.first?["definition"] as? [String: Any])
        #expect(definition["driver"] as? String == "polar")
        #expect((definition["commands"] as? [[String: Any]])?.contains { $0["name"] as? String == "recording" } == true)
        let bare = try #require(try JSONSerialization.jsonObject(with: Data(BridgePayload.devices([entry]))) as? [[String: Any]])
        #expect(bare.first?["definition"] == nil)
    }
}
