import BlueZ
import DBus
import Testing

@testable import ESPHome

/// A strap's services as a proxy lists them, into the objects BlueZ would export and the model BlueZ's client builds
/// from them: the same shapes as a local adapter's, and each characteristic's handle and CCCD for the API's requests.
@Suite("ESPHome: a proxy's services as BlueZ objects")
struct ProxyGATTObjectsTests {
    static func service(_ short: UInt32, handle: UInt32, _ characteristics: [BluetoothGATTCharacteristic]) -> BluetoothGATTService {
        var service = BluetoothGATTService()
        service.shortUuid = short
        service.handle = handle
        service.characteristics = characteristics
        return service
    }

    static func characteristic(_ short: UInt32, handle: UInt32, properties: UInt32, cccd: UInt32? = nil) -> BluetoothGATTCharacteristic {
        var characteristic = BluetoothGATTCharacteristic()
        characteristic.shortUuid = short
        characteristic.handle = handle
        characteristic.properties = properties
        if let cccd {
            var descriptor = BluetoothGATTDescriptor()
            descriptor.shortUuid = 0x2902
            descriptor.handle = cccd
            characteristic.descriptors = [descriptor]
        }
        return characteristic
    }

    @Test("heart rate and battery: paths, flags, the CCCD's handle; and BlueZ's model reads them as a local device's")
    func strap() {
        let device: ObjectPath = "/org/esphome/kitchen/dev_C0_FF_EE_00_00_01"
        let services = [
            Self.service(0x180D, handle: 0x0010, [Self.characteristic(0x2A37, handle: 0x0012, properties: 0x10, cccd: 0x0013),
                                                  Self.characteristic(0x2A38, handle: 0x0015, properties: 0x02)]),
            Self.service(0x180F, handle: 0x0020, [Self.characteristic(0x2A19, handle: 0x0022, properties: 0x12, cccd: 0x0023)]),
        ]
        let objects = ProxyGATTObjects(services: services, device: device, mtu: 247)
        #expect(objects.objects.map(\.path.rawValue) == [
            device.rawValue + "/service0010", device.rawValue + "/service0010/char0011", device.rawValue + "/service0010/char0011/desc0013",
            device.rawValue + "/service0010/char0014", device.rawValue + "/service0020", device.rawValue + "/service0020/char0021",
            device.rawValue + "/service0020/char0021/desc0023",
        ])
        let measurement = ObjectPath(device.rawValue + "/service0010/char0011")
        #expect(objects.characteristics[measurement] == .init(uuid: "00002a37-0000-1000-8000-00805f9b34fb", handle: 0x12,
                                                              properties: 0x10, clientConfigurationHandle: 0x13))
        #expect(objects.characteristics[ObjectPath(device.rawValue + "/service0010/char0014")]?.clientConfigurationHandle == nil)

        var model = BlueZModel()
        _ = model.interfacesAdded(path: device, interfaces: [BlueZNames.device: ["Address": "C0:FF:EE:00:00:01", "Connected": true]])
        for (path, interfaces) in objects.objects { _ = model.interfacesAdded(path: path, interfaces: interfaces) }
        #expect(model.services.count == 2)
        #expect(model.characteristics.count == 3)
        #expect(model.characteristics[measurement]?.flags == ["notify"])
        #expect(model.characteristics[ObjectPath(device.rawValue + "/service0020/char0021")]?.flags == ["read", "notify"])
    }

    @Test("BlueZ's flag names for every property bit")
    func flags() {
        #expect(ProxyGATTObjects.flags(0xFF) == ["broadcast", "read", "write-without-response", "write", "notify", "indicate",
                                                 "authenticated-signed-writes", "extended-properties"])
        #expect(ProxyGATTObjects.flags(0).isEmpty)
    }
}
