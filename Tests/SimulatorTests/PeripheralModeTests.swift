import DBus
@testable import Simulator
import Testing
import Wearables
import SimulatedWearables

/// The pure parts of peripheral mode (`wear2mqtt-sim peripheral`): what is registered with a real bluetoothd.
struct GattApplicationLayoutTests {
    @Test func aStrapsTableBecomesServiceCharacteristicObjectsBelowTheRootWithoutCCCDescriptors() throws {
        let strap = try SimulatedHeartRateStrap(SimulatedDeviceConfiguration(seed: 1))
        let layout = GattApplicationLayout(root: "/org/wear2mqtt/app", services: strap.services)
        #expect(layout.services.map(\.uuid) == strap.services.map(\.uuid),
                "bluetoothd adds GAP and GATT itself; only the device's own services are registered")
        let measurement = try #require(layout.characteristic(BluetoothUUID(0x2A37)))
        #expect(measurement.path == "/org/wear2mqtt/app/service0/char0")
        #expect(measurement.servicePath == "/org/wear2mqtt/app/service0")
        #expect(layout.characteristics.allSatisfy { characteristic in
            characteristic.descriptors.allSatisfy { $0.uuid != BluetoothUUID(0x2902) }
        }, "bluetoothd's ATT server adds the CCC of every notifiable characteristic")

        let properties = GattApplicationLayout.characteristicProperties(measurement)
        #expect(properties["Flags"] == .strings(["notify"]))
        #expect(properties["Service"] == .objectPath("/org/wear2mqtt/app/service0"))
        #expect(properties["Notifying"] == .boolean(false))
        let location = try #require(layout.characteristic(BluetoothUUID(0x2A38)))
        #expect(GattApplicationLayout.characteristicProperties(location)["Notifying"] == nil,
                "Notifying only where a central can subscribe")
        #expect(GattApplicationLayout.serviceProperties(layout.services[0])["Primary"] == .boolean(true))
    }
}

struct PeripheralAdvertisementTests {
    @Test func aConnectableDeviceAdvertisesAsADiscoverablePeripheralWithItsServicesAndName() {
        let advertisement = SimulatedAdvertisement(localName: "HRM", serviceUUIDs: [BluetoothUUID(0x180D)],
                                                   manufacturerData: [0x0059: [1, 2]], appearance: 0x0341)
        let properties = PeripheralAdvertisement.properties(advertisement, name: "HRM-Real")
        #expect(properties["Type"] == .string("peripheral"))
        #expect(properties["Discoverable"] == .boolean(true), "centrals without a Transport filter ignore the rest")
        #expect(properties["ServiceUUIDs"] == .strings(["0000180d-0000-1000-8000-00805f9b34fb"]))
        #expect(properties["LocalName"] == .string("HRM-Real"))
        #expect(properties["Appearance"] == .uint16(0x0341))
        #expect(properties["ManufacturerData"]?.signature == "a{qv}")
        #expect(properties["ServiceData"] == nil)
    }

    @Test func aNonConnectableDeviceBroadcasts() {
        let beacon = SimulatedAdvertisement(localName: nil, serviceUUIDs: [], isConnectable: false)
        let properties = PeripheralAdvertisement.properties(beacon, name: nil)
        #expect(properties["Type"] == .string("broadcast"))
        #expect(properties["LocalName"] == nil)
    }
}

struct ATTErrorReplyTests {
    @Test func attErrorsBecomeTheBlueZErrorNamesBluetoothdMapsBack() {
        #expect(ATTErrorReply.busError(for: .application(0x80)).remoteName == "org.bluez.Error.Failed",
                "bluetoothd 5.66 turns Failed into ATT 0x80")
        #expect(ATTErrorReply.busError(for: .writeNotPermitted).remoteName == "org.bluez.Error.NotPermitted")
        #expect(ATTErrorReply.busError(for: .invalidOffset).remoteName == "org.bluez.Error.InvalidOffset")
        #expect(ATTErrorReply.busError(for: .invalidAttributeValueLength).remoteName == "org.bluez.Error.InvalidValueLength")
        #expect(ATTErrorReply.busError(for: .procedureAlreadyInProgress).remoteName == "org.bluez.Error.InProgress")
    }
}
