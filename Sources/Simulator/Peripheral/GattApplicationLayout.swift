import DBus
import Wearables
import SimulatedWearables

/// How a simulated device's own GATT table is laid out as a GATT *server* application for bluetoothd's
/// `org.bluez.GattManager1.RegisterApplication` (`doc/org.bluez.GattManager.rst`): one object per service,
/// characteristic and descriptor below the application root, each naming its parent (`Service`,
/// `Characteristic`), as `test/example-gatt-server` does.
///
/// Unlike `GATTLayout` (the central's view, with handles), this holds no handles and none of what bluetoothd's
/// own ATT server adds: the GAP (0x1800) and GATT (0x1801) services and the Client Characteristic Configuration
/// descriptors of notifiable characteristics are bluetoothd's, so a CCC descriptor in the device's table is left
/// out rather than registered twice.
struct GattApplicationLayout: Sendable, Equatable {
    struct Service: Sendable, Equatable {
        var path: ObjectPath
        var uuid: BluetoothUUID
        var isPrimary: Bool
        var characteristics: [Characteristic]
    }

    struct Characteristic: Sendable, Equatable {
        var path: ObjectPath
        var servicePath: ObjectPath
        var uuid: BluetoothUUID
        var flags: CharacteristicFlags
        var initialValue: [UInt8]
        var descriptors: [Descriptor]
    }

    struct Descriptor: Sendable, Equatable {
        var path: ObjectPath
        var characteristicPath: ObjectPath
        var uuid: BluetoothUUID
        var flags: DescriptorFlags
        var value: [UInt8]
    }

    let root: ObjectPath
    let services: [Service]

    init(root: ObjectPath, services deviceServices: [SimulatedService]) {
        self.root = root
        services = deviceServices.enumerated().map { serviceIndex, service in
            let servicePath = root.appending("service\(serviceIndex)")
            return Service(path: servicePath, uuid: service.uuid, isPrimary: service.isPrimary,
                           characteristics: service.characteristics.enumerated().map { characteristicIndex, characteristic in
                let path = servicePath.appending("char\(characteristicIndex)")
                let descriptors = characteristic.descriptors
                    .filter { $0.uuid != SimulatedDescriptor.clientCharacteristicConfigurationUUID }
                    .enumerated().map { descriptorIndex, descriptor in
                        Descriptor(path: path.appending("desc\(descriptorIndex)"), characteristicPath: path,
                                   uuid: descriptor.uuid, flags: descriptor.flags, value: descriptor.value)
                    }
                return Characteristic(path: path, servicePath: servicePath, uuid: characteristic.uuid,
                                      flags: characteristic.flags, initialValue: characteristic.initialValue,
                                      descriptors: descriptors)
            })
        }
    }

    var characteristics: [Characteristic] { services.flatMap(\.characteristics) }

    func characteristic(_ uuid: BluetoothUUID) -> Characteristic? { characteristics.first { $0.uuid == uuid } }

    // MARK: Properties as the server-side interfaces declare them

    static func serviceProperties(_ service: Service) -> [String: DBusValue] {
        ["UUID": .string(service.uuid.string), "Primary": .boolean(service.isPrimary), "Includes": .objectPaths([])]
    }

    /// `Notifying` only where a central can subscribe; bluetoothd reads it from nothing else.
    static func characteristicProperties(_ characteristic: Characteristic) -> [String: DBusValue] {
        var values: [String: DBusValue] = [
            "UUID": .string(characteristic.uuid.string),
            "Service": .objectPath(characteristic.servicePath),
            "Flags": .strings(characteristic.flags.bluezNames),
            "Value": .bytes(characteristic.initialValue),
        ]
        if !characteristic.flags.isDisjoint(with: [.notify, .indicate]) { values["Notifying"] = .boolean(false) }
        return values
    }

    static func descriptorProperties(_ descriptor: Descriptor) -> [String: DBusValue] {
        var flags: [String] = []
        if descriptor.flags.contains(.read) { flags.append("read") }
        if descriptor.flags.contains(.write) { flags.append("write") }
        return [
            "UUID": .string(descriptor.uuid.string),
            "Characteristic": .objectPath(descriptor.characteristicPath),
            "Flags": .strings(flags),
            "Value": .bytes(descriptor.value),
        ]
    }
}
