import Wearables
import SimulatedWearables

/// The attribute table a simulated peripheral's ATT server holds, with handles assigned the way a peripheral's
/// GATT database assigns them, and the object paths BlueZ derives from the handles (`serviceXXXX`,
/// `charYYYY` from the characteristic *declaration* handle, `descZZZZ`, four lower-case hex digits;
/// `src/gatt-client.c`).
///
/// Every LE peripheral starts its table with the GAP service (0x1800: Device Name, Appearance, Peripheral
/// Preferred Connection Parameters) and the GATT service (0x1801: Service Changed with its CCC descriptor), so
/// a device's own first service starts at 0x000c, as on most real devices. BlueZ's GAP plugin claims 0x1800, so
/// it is not exported on D-Bus (`isHidden`); 0x1801 is.
package struct GATTLayout: Sendable, Equatable {
    package struct Service: Sendable, Equatable {
        package var handle: UInt16
        package var endHandle: UInt16
        package var uuid: BluetoothUUID
        package var isPrimary: Bool
        package var isHidden: Bool
        package var pathElement: String
        package var characteristics: [Characteristic]
    }

    package struct Characteristic: Sendable, Equatable {
        package var declarationHandle: UInt16
        package var valueHandle: UInt16
        package var uuid: BluetoothUUID
        package var flags: CharacteristicFlags
        package var initialValue: [UInt8]
        /// Relative to the device path: `service000c/char000d`.
        package var relativePath: String
        package var descriptors: [Descriptor]
        /// Characteristics the host answers itself (GAP, Service Changed) rather than the device behaviour.
        package var isHostOwned: Bool
    }

    package struct Descriptor: Sendable, Equatable {
        package var handle: UInt16
        package var uuid: BluetoothUUID
        package var flags: DescriptorFlags
        package var initialValue: [UInt8]
        package var isClientConfiguration: Bool
        package var relativePath: String
    }

    private(set) var services: [Service] = []

    package init(deviceServices: [SimulatedService], deviceName: String, appearance: UInt16?) {
        var next: UInt16 = 1
        let appearanceValue: [UInt8] = appearance.map { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } ?? [0, 0]
        // Interval 30–50 ms, latency 0, supervision timeout 4 s: what small wearables usually ask for.
        let connectionParameters: [UInt8] = [0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x90, 0x01]
        let gap = SimulatedService(BluetoothUUID(0x1800), characteristics: [
            SimulatedCharacteristic(BluetoothUUID(0x2A00), flags: .read, initialValue: [UInt8](deviceName.utf8)),
            SimulatedCharacteristic(BluetoothUUID(0x2A01), flags: .read, initialValue: appearanceValue),
            SimulatedCharacteristic(BluetoothUUID(0x2A04), flags: .read, initialValue: connectionParameters),
        ])
        let gatt = SimulatedService(BluetoothUUID(0x1801), characteristics: [
            SimulatedCharacteristic(BluetoothUUID(0x2A05), flags: .indicate),
        ])
        for (index, service) in ([gap, gatt] + deviceServices).enumerated() {
            services.append(Self.layOut(service, from: &next, hidden: index == 0, hostOwned: index < 2))
        }
    }

    private static func hex4(_ handle: UInt16) -> String {
        let text = String(handle, radix: 16)
        return String(repeating: "0", count: 4 - text.count) + text
    }

    private static func layOut(_ service: SimulatedService, from next: inout UInt16, hidden: Bool, hostOwned: Bool) -> Service {
        let serviceHandle = next
        next += 1
        let serviceElement = "service" + hex4(serviceHandle)
        var characteristics: [Characteristic] = []
        for characteristic in service.characteristics {
            let declaration = next
            let value = next + 1
            next += 2
            let path = serviceElement + "/char" + hex4(declaration)
            var descriptors: [Descriptor] = []
            if characteristic.canSubscribe {
                descriptors.append(Descriptor(handle: next, uuid: SimulatedDescriptor.clientCharacteristicConfigurationUUID,
                                              flags: [.read, .write], initialValue: [0, 0], isClientConfiguration: true,
                                              relativePath: path + "/desc" + hex4(next)))
                next += 1
            }
            for descriptor in characteristic.descriptors {
                descriptors.append(Descriptor(handle: next, uuid: descriptor.uuid, flags: descriptor.flags,
                                              initialValue: descriptor.value, isClientConfiguration: false,
                                              relativePath: path + "/desc" + hex4(next)))
                next += 1
            }
            characteristics.append(Characteristic(declarationHandle: declaration, valueHandle: value, uuid: characteristic.uuid,
                                                  flags: characteristic.flags, initialValue: characteristic.initialValue,
                                                  relativePath: path, descriptors: descriptors, isHostOwned: hostOwned))
        }
        return Service(handle: serviceHandle, endHandle: next - 1, uuid: service.uuid, isPrimary: service.isPrimary,
                       isHidden: hidden, pathElement: serviceElement, characteristics: characteristics)
    }

    /// The services BlueZ exports as GattService1 objects.
    package var exportedServices: [Service] { services.filter { !$0.isHidden } }

    /// The primary services' UUIDs sorted as BlueZ keeps a resolved device's `UUIDs` (every primary service,
    /// claimed ones included).
    package var resolvedUUIDs: [BluetoothUUID] {
        Array(Set(services.filter(\.isPrimary).map(\.uuid))).sorted()
    }

    package func characteristic(_ uuid: BluetoothUUID) -> Characteristic? {
        exportedServices.lazy.flatMap(\.characteristics).first { $0.uuid == uuid }
    }

    package func characteristic(atRelativePath path: String) -> Characteristic? {
        exportedServices.lazy.flatMap(\.characteristics).first { $0.relativePath == path }
    }

    package func descriptor(atRelativePath path: String) -> (Characteristic, Descriptor)? {
        for characteristic in exportedServices.flatMap(\.characteristics) {
            if let descriptor = characteristic.descriptors.first(where: { $0.relativePath == path }) {
                return (characteristic, descriptor)
            }
        }
        return nil
    }
}
