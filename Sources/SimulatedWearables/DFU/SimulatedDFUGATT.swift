import Wearables
import Firmware

/// The GATT tables and advertisement of a simulated Nordic device's DFU, in application and in bootloader mode.
enum SimulatedDFUGATT {
    static let secureService = BluetoothUUID(constant: SecureDFUUUID.service)
    static let secureControlPoint = BluetoothUUID(constant: SecureDFUUUID.controlPoint)
    static let securePacket = BluetoothUUID(constant: SecureDFUUUID.packet)
    static let buttonless = BluetoothUUID(constant: SecureDFUUUID.buttonlessWithoutBonds)
    static let legacyService = BluetoothUUID(constant: LegacyDFUUUID.service)
    static let legacyControlPoint = BluetoothUUID(constant: LegacyDFUUUID.controlPoint)
    static let legacyPacket = BluetoothUUID(constant: LegacyDFUUUID.packet)
    static let legacyVersion = BluetoothUUID(constant: LegacyDFUUUID.version)

    /// The name nRF5 bootloaders advertise (`DEVICE_NAME` of the SDK's bootloader examples).
    static let bootloaderName = "DfuTarg"

    /// What Nordic's application-side Legacy DFU service (`ble_dfu.c` with `dfu_app_handler.c`) answers on 0x1534:
    /// 0x0001, which tells a DFU controller that the application, not the bootloader, is running.
    static let applicationLegacyVersion = LegacyDFUVersion(major: 0, minor: 1)

    /// What the application offers: the buttonless "without bonds" characteristic (write, indicate) in 0xFE59, or
    /// the Legacy DFU service with control point (write, notify), packet (write without response) and version (read).
    static func applicationServices(_ variant: SimulatedDFUOptions.Variant) -> [SimulatedService] {
        switch variant {
        case .secure:
            [SimulatedService(secureService, characteristics: [
                SimulatedCharacteristic(buttonless, flags: [.write, .indicate]),
            ])]
        case .legacy:
            [legacyService(version: applicationLegacyVersion)]
        case .none:
            []
        }
    }

    /// The bootloader's table: the DFU service alone, as the SDK's bootloaders serve (besides GAP and GATT). A Legacy
    /// bootloader older than SDK 7 has no version characteristic.
    static func bootloaderServices(_ options: SimulatedDFUOptions) -> [SimulatedService] {
        switch options.variant {
        case .secure:
            [SimulatedService(secureService, characteristics: [
                SimulatedCharacteristic(secureControlPoint, flags: [.write, .notify]),
                SimulatedCharacteristic(securePacket, flags: .writeWithoutResponse),
            ])]
        case .legacy:
            [legacyService(version: options.legacyBootloader == .sdk6 ? nil : LegacyDFUTarget().configuration.version)]
        case .none:
            []
        }
    }

    static func bootloaderAdvertisement(_ variant: SimulatedDFUOptions.Variant, rssi: Int) -> SimulatedAdvertisement {
        SimulatedAdvertisement(localName: bootloaderName,
                               serviceUUIDs: variant == .legacy ? [legacyService] : [secureService], rssi: rssi)
    }

    /// The control point of `variant`, where requests arrive and answers go out.
    static func controlPoint(_ variant: SimulatedDFUOptions.Variant) -> BluetoothUUID {
        variant == .legacy ? legacyControlPoint : secureControlPoint
    }

    static func packet(_ variant: SimulatedDFUOptions.Variant) -> BluetoothUUID {
        variant == .legacy ? legacyPacket : securePacket
    }

    private static func legacyService(version: LegacyDFUVersion?) -> SimulatedService {
        var characteristics = [
            SimulatedCharacteristic(legacyControlPoint, flags: [.write, .notify]),
            SimulatedCharacteristic(legacyPacket, flags: .writeWithoutResponse),
        ]
        if let version {
            characteristics.append(SimulatedCharacteristic(legacyVersion, flags: .read, initialValue: version.encoded()))
        }
        return SimulatedService(legacyService, characteristics: characteristics)
    }
}
