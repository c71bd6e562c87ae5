import DBus
import Wearables
import SimulatedWearables

/// A simulated device's advertisement as the properties of an `org.bluez.LEAdvertisement1` object
/// (`doc/org.bluez.LEAdvertisement.rst`, `test/example-advertisement`) that bluetoothd's
/// `LEAdvertisingManager1.RegisterAdvertisement` turns into advertising data on the air.
///
/// Kept minimal: bluetoothd builds the Flags itself (`Discoverable` true gives LE General Discoverable, which
/// centrals without a discovery filter need), and a legacy advertisement has 31 bytes, so only what a central
/// matches on goes in: service UUIDs, the name, manufacturer and service data, appearance. TX power and RSSI
/// are the radio's, not the device's.
enum PeripheralAdvertisement {
    static func properties(_ advertisement: SimulatedAdvertisement, name: String?) -> [String: DBusValue] {
        var values: [String: DBusValue] = [
            "Type": .string(advertisement.isConnectable ? "peripheral" : "broadcast"),
            "ServiceUUIDs": .strings(advertisement.serviceUUIDs.map(\.string)),
            "Discoverable": .boolean(true),
        ]
        if let localName = name ?? advertisement.localName { values["LocalName"] = .string(localName) }
        if let appearance = advertisement.appearance { values["Appearance"] = .uint16(appearance) }
        if !advertisement.manufacturerData.isEmpty {
            values["ManufacturerData"] = .dictionary(keySignature: "q", valueSignature: "v",
                advertisement.manufacturerData.sorted { $0.key < $1.key }.map { .init(.uint16($0.key), .variant(.bytes($0.value))) })
        }
        if !advertisement.serviceData.isEmpty {
            values["ServiceData"] = .dictionary(keySignature: "s", valueSignature: "v",
                advertisement.serviceData.sorted { $0.key < $1.key }.map { .init(.string($0.key.string), .variant(.bytes($0.value))) })
        }
        return values
    }
}

/// What a GATT server application answers instead of a value: the `org.bluez.Error.*` names bluetoothd
/// 5.66 maps back onto ATT error codes (`dbus_error_to_att_ecode` in `src/gatt-database.c`). BlueZ 5.66 has
/// no way to pass any other application error through: `Failed` becomes 0x80, the first application error,
/// which is what the standard services here use.
enum ATTErrorReply {
    static func busError(for error: ATTError) -> BusError {
        switch error {
        case .readNotPermitted, .writeNotPermitted: .remote(name: "org.bluez.Error.NotPermitted", message: error.description)
        case .insufficientAuthentication, .insufficientAuthorization, .insufficientEncryption:
            .remote(name: "org.bluez.Error.NotAuthorized", message: error.description)
        case .invalidOffset: .remote(name: "org.bluez.Error.InvalidOffset", message: error.description)
        case .invalidAttributeValueLength: .remote(name: "org.bluez.Error.InvalidValueLength", message: error.description)
        case .requestNotSupported: .remote(name: "org.bluez.Error.NotSupported", message: error.description)
        case .procedureAlreadyInProgress: .remote(name: "org.bluez.Error.InProgress", message: error.description)
        default: .remote(name: "org.bluez.Error.Failed", message: error.description)
        }
    }
}
