import DBus
import SimulatedWearables

/// Advertisement fields in the shapes bluetoothd gives Device1 (`ManufacturerData` `a{qv}`, `ServiceData` `a{sv}`).
extension SimulatedAdvertisement {
    package var bluezManufacturerData: DBusValue {
        .dictionary(keySignature: "q", valueSignature: "v", manufacturerData.sorted { $0.key < $1.key }.map {
            DBusValue.DictionaryEntry(.uint16($0.key), .variant(.bytes($0.value)))
        })
    }

    package var bluezServiceData: DBusValue {
        .dictionary(keySignature: "s", valueSignature: "v", serviceData.sorted { $0.key < $1.key }.map {
            DBusValue.DictionaryEntry(.string($0.key.string), .variant(.bytes($0.value)))
        })
    }
}
