@testable import Gateway
import Testing

/// The device list at start, merged from config.yaml and the stored list (`ManagedDeviceList`), without a manager.
@Suite("The device list at start")
struct ManagedDeviceListTests {
    let strap = "AA:BB:CC:DD:EE:01", tag = "AA:BB:CC:DD:EE:02", band = "AA:BB:CC:DD:EE:03"

    @Test("a configured device keeps what requests changed: its id, name, options, configuration, detected driver")
    func storedChangesOutliveARestart() {
        let configured = ManagedDevice(id: "", address: strap, driver: ManagedDevice.driverToDetect, fromConfiguration: true,
                                       configure: ["sensors": ["heart_rate": true]])
        var options = DeviceOptions()
        options.batchMilliseconds = 100
        let stored = ManagedDevice(id: "chest", address: strap, driver: "polar", name: "Chest", options: options)
        let merged = ManagedDeviceList.merge(configured: [configured], stored: [stored], configuredOptions: [:])
        #expect(merged.undetected.isEmpty)
        let chest = merged.managed["chest"]
        #expect(chest?.driver == "polar" && chest?.name == "Chest" && chest?.options.batchMilliseconds == 100)
        #expect(chest?.configure == ["sensors": ["heart_rate": true]] && chest?.fromConfiguration == true)
    }

    @Test("config.yaml's options win over the stored ones they name")
    func configuredOptionsWin() {
        let configured = ManagedDevice(id: "tag", address: tag, driver: "standard", fromConfiguration: true)
        var options = DeviceOptions()
        options.batchMilliseconds = 100
        let stored = ManagedDevice(id: "tag", address: tag, driver: "standard", options: options)
        let merged = ManagedDeviceList.merge(configured: [configured], stored: [stored],
                                             configuredOptions: [tag: DeviceOptionsChange(batchMilliseconds: 250)])
        #expect(merged.managed["tag"]?.options.batchMilliseconds == 250)
    }

    @Test("a configured device without driver waits to be seen; a stored one config.yaml no longer names stays")
    func undetectedAndStoredOnly() {
        let configured = ManagedDevice(id: "", address: tag, driver: ManagedDevice.driverToDetect, fromConfiguration: true)
        let stored = ManagedDevice(id: "band", address: band, driver: "gofit")
        let merged = ManagedDeviceList.merge(configured: [configured], stored: [stored], configuredOptions: [:])
        #expect(merged.undetected.map(\.address) == [tag])
        #expect(Set(merged.managed.keys) == ["band"])
    }
}
