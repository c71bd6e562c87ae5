import BlueZ
import DBus
import SimulatedWearables
import Simulator

/// The D-Bus properties BlueZ gives its objects, for the in-memory central's model: the same shapes
/// `BlueZModel` reads from bluetoothd, so everything above `BluetoothCentral` sees one kind of tree.
enum InMemoryObjects {
    static let adapterPath: ObjectPath = "/org/bluez/hci0"

    static func adapter(address: BluetoothAddress, powered: Bool, discovering: Bool) -> [String: [String: DBusValue]] {
        [BlueZNames.adapter: [
            "Address": .string(address.rawValue), "Name": "wear2mqtt-test", "Alias": "wear2mqtt-test",
            "Powered": .boolean(powered), "Discovering": .boolean(discovering),
        ]]
    }

    static func devicePath(_ address: BluetoothAddress) -> ObjectPath {
        ObjectPath(adapterPath.rawValue + "/dev_" + address.rawValue.replacingOccurrences(of: ":", with: "_"))
    }

    /// Device1 as BlueZ exports it once it has seen the device advertise.
    static func device(address: BluetoothAddress, advertisement: SimulatedAdvertisement, rssi: Int,
                       paired: Bool) -> [String: [String: DBusValue]] {
        var values: [String: DBusValue] = [
            "Address": .string(address.rawValue), "AddressType": "public", "Adapter": .objectPath(adapterPath),
            "Paired": .boolean(paired), "Bonded": .boolean(paired), "Trusted": false, "Blocked": false,
            "Connected": false, "ServicesResolved": false, "RSSI": .int16(Int16(clamping: rssi)),
            "UUIDs": .strings(advertisement.serviceUUIDs.map(\.string)),
        ]
        if let name = advertisement.localName {
            values["Name"] = .string(name)
            values["Alias"] = .string(name)
        }
        if let appearance = advertisement.appearance { values["Appearance"] = .uint16(appearance) }
        if !advertisement.manufacturerData.isEmpty { values["ManufacturerData"] = advertisement.bluezManufacturerData }
        if !advertisement.serviceData.isEmpty { values["ServiceData"] = advertisement.bluezServiceData }
        return [BlueZNames.device: values]
    }

    /// The GATT objects of a connected device, in the order BlueZ adds them: each service, then its characteristics.
    static func gatt(of layout: GATTLayout, device: ObjectPath, mtu: Int) -> [(ObjectPath, [String: [String: DBusValue]])] {
        var objects: [(ObjectPath, [String: [String: DBusValue]])] = []
        for service in layout.exportedServices {
            let servicePath = ObjectPath(device.rawValue + "/" + service.pathElement)
            objects.append((servicePath, [BlueZNames.gattService: [
                "UUID": .string(service.uuid.string), "Device": .objectPath(device), "Primary": .boolean(service.isPrimary),
            ]]))
            for characteristic in service.characteristics {
                var values: [String: DBusValue] = [
                    "UUID": .string(characteristic.uuid.string), "Service": .objectPath(servicePath),
                    "Flags": .strings(characteristic.flags.bluezNames), "MTU": .uint16(UInt16(mtu)),
                ]
                if characteristic.flags.contains(.notify) || characteristic.flags.contains(.indicate) { values["Notifying"] = false }
                objects.append((ObjectPath(device.rawValue + "/" + characteristic.relativePath),
                                [BlueZNames.gattCharacteristic: values]))
            }
        }
        return objects
    }
}
