import BlueZ
import DBus
import Foundation
@testable import Gateway
import Testing
import Wear2MQTTTesting
import Wearables

@Suite struct DeviceFilterTests {
    let strap = BluetoothAddress("AA:BB:CC:DD:EE:01")!
    let tag = BluetoothAddress("AA:BB:CC:DD:EE:02")!

    @Test func anEmptyFilterAllowsEverything() {
        #expect(DeviceFilter().permits(address: strap, driver: "standard"))
    }

    @Test func denyWinsOverAllow() {
        let filter = DeviceFilter(allowAddresses: [strap], denyAddresses: [strap])
        #expect(!filter.permits(address: strap, driver: "standard"))
    }

    @Test func aNonEmptyAllowListAdmitsOnlyWhatItNames() {
        let byAddress = DeviceFilter(allowAddresses: [strap])
        #expect(byAddress.permits(address: strap, driver: "standard"))
        #expect(!byAddress.permits(address: tag, driver: "standard"))
        let byDriver = DeviceFilter(allowDrivers: ["bose"], denyDrivers: [])
        #expect(!byDriver.permits(address: strap, driver: "standard"))
        #expect(DeviceFilter(denyDrivers: ["standard"]).permits(address: strap, driver: "standard") == false)
    }
}

@Suite struct DeviceStoreTests {
    @Test func savedDevicesComeBackWithTheirNamesAndOptions() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = DeviceStore(stateDirectory: directory.path)
        #expect(try store.load().isEmpty)
        var options = DeviceOptions()
        options.batchMilliseconds = 250
        options.notify = "start_notify"
        let devices = [ManagedDevice(id: "chest_strap", address: "AA:BB:CC:DD:EE:01", driver: "standard", name: "chest_strap", options: options),
                       ManagedDevice(id: "standard_aabbccddee02", address: "AA:BB:CC:DD:EE:02", driver: "standard")]
        try store.save(devices)
        #expect(try store.load() == devices.sorted { $0.id < $1.id })
        let attributes = try FileManager.default.attributesOfItem(atPath: store.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(!FileManager.default.fileExists(atPath: store.path + ".tmp"))
    }

    @Test func aCorruptFileIsAnErrorNotAnEmptyList() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try directory.write("devices.json", "{ not json")
        #expect(throws: (any Error).self) { try DeviceStore(stateDirectory: directory.path).load() }
    }
}

@Suite struct DriverRegistryTests {
    func advertisement(uuids: [String]) -> Advertisement {
        var model = BlueZModel()
        let path: ObjectPath = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01"
        _ = model.interfacesAdded(path: path, interfaces: [BlueZNames.device: [
            "Address": "AA:BB:CC:DD:EE:01", "UUIDs": .strings(uuids)]])
        return model.devices[path]!
    }

    @Test func aHeartRateStrapIsServedByTheStandardDriver() {
        let strap = advertisement(uuids: ["0000180d-0000-1000-8000-00805f9b34fb"])
        #expect(WearableDrivers.all.bestMatch(for: strap)?.name == "standard")
        #expect(WearableDrivers.all.driver(named: "standard") != nil)
    }

    @Test func aDeviceWithNoKnownServiceHasNoDriver() {
        #expect(WearableDrivers.all.bestMatch(for: advertisement(uuids: ["0000feed-0000-1000-8000-00805f9b34fb"])) == nil)
    }
}
