extension DeviceLink {
    /// The Device Information Service strings the device has (manufacturer, model, serial, hardware, firmware,
    /// software), under the device state's keys. Every driver reads them on connect; one missing or malformed
    /// string is left out, not an error.
    public func readDeviceInformationStrings() async -> [String: DeviceValue] {
        let strings: [(UInt16, String)] = [
            (GATTUUID.Characteristic.manufacturerName, "manufacturer"), (GATTUUID.Characteristic.modelNumber, "model"),
            (GATTUUID.Characteristic.serialNumber, "serial"), (GATTUUID.Characteristic.hardwareRevision, "hardware"),
            (GATTUUID.Characteristic.firmwareRevision, "firmware"), (GATTUUID.Characteristic.softwareRevision, "software"),
        ]
        var state: [String: DeviceValue] = [:]
        for (uuid, key) in strings {
            guard let characteristic = characteristic(GATTUUID.string(for: uuid)),
                  let bytes = try? await read(characteristic),
                  let text = try? DeviceInformationString.decode(bytes) else { continue }
            state[key] = .text(text)
        }
        return state
    }
}
