import BlueZ
import DBus

/// A connected device's services as a proxy lists them (`BluetoothGATTGetServicesResponse`), turned into the objects
/// BlueZ would export for it — the same interfaces, properties and path shapes (`service000c/char000d/desc000f`) — so
/// the model above `BluetoothCentral` cannot tell a proxy's device from a local one; and the handle each
/// characteristic path stands for, which every GATT request over the API names. Pure.
public struct ProxyGATTObjects: Sendable {
    public struct Characteristic: Sendable, Equatable {
        public var uuid: String
        /// The handle the API's read, write and notify requests name.
        public var handle: UInt32
        public var properties: UInt32
        /// The Client Characteristic Configuration descriptor's handle, which a notifying client writes itself.
        public var clientConfigurationHandle: UInt32?
    }

    /// In the order BlueZ adds them: each service, then its characteristics, then their descriptors.
    public private(set) var objects: [(path: ObjectPath, interfaces: [String: [String: DBusValue]])] = []
    public private(set) var characteristics: [ObjectPath: Characteristic] = [:]

    static let clientConfiguration = "00002902-0000-1000-8000-00805f9b34fb"

    public init(services: [BluetoothGATTService], device: ObjectPath, mtu: Int) {
        for service in services {
            guard let serviceUUID = ProxyUUID.fromAPI(service.uuid, short: service.shortUuid) else { continue }
            let servicePath = Self.path(device, "service", service.handle)
            objects.append((servicePath, [BlueZNames.gattService: [
                "UUID": .string(serviceUUID), "Device": .objectPath(device), "Primary": true,
            ]]))
            for characteristic in service.characteristics {
                guard let uuid = ProxyUUID.fromAPI(characteristic.uuid, short: characteristic.shortUuid) else { continue }
                // BlueZ names a characteristic by its declaration, the handle before its value.
                let path = Self.path(servicePath, "char", max(characteristic.handle, 1) - 1)
                var values: [String: DBusValue] = [
                    "UUID": .string(uuid), "Service": .objectPath(servicePath),
                    "Flags": .strings(Self.flags(characteristic.properties)), "MTU": .uint16(UInt16(clamping: mtu)),
                ]
                if characteristic.properties & 0x30 != 0 { values["Notifying"] = false }
                objects.append((path, [BlueZNames.gattCharacteristic: values]))
                var configuration: UInt32?
                for descriptor in characteristic.descriptors {
                    guard let descriptorUUID = ProxyUUID.fromAPI(descriptor.uuid, short: descriptor.shortUuid) else { continue }
                    if descriptorUUID == Self.clientConfiguration { configuration = descriptor.handle }
                    objects.append((Self.path(path, "desc", descriptor.handle), [BlueZNames.gattDescriptor: [
                        "UUID": .string(descriptorUUID), "Characteristic": .objectPath(path),
                    ]]))
                }
                characteristics[path] = Characteristic(uuid: uuid, handle: characteristic.handle,
                                                       properties: characteristic.properties, clientConfigurationHandle: configuration)
            }
        }
    }

    /// BlueZ's names for the characteristic property bits (GATT's Characteristic Properties field).
    public static func flags(_ properties: UInt32) -> [String] {
        let names: [(UInt32, String)] = [
            (0x01, "broadcast"), (0x02, "read"), (0x04, "write-without-response"), (0x08, "write"), (0x10, "notify"),
            (0x20, "indicate"), (0x40, "authenticated-signed-writes"), (0x80, "extended-properties"),
        ]
        return names.filter { properties & $0.0 != 0 }.map(\.1)
    }

    private static func path(_ parent: ObjectPath, _ kind: String, _ handle: UInt32) -> ObjectPath {
        let hex = String(handle & 0xFFFF, radix: 16)
        return ObjectPath(parent.rawValue + "/" + kind + String(repeating: "0", count: 4 - hex.count) + hex)
    }
}
