extension StandardGATTDriver {
    public static let driverDescription = DriverDescription(
        name: "standard", vendor: "Bluetooth SIG",
        summary: "Devices speaking the Bluetooth SIG profiles: heart-rate straps, thermometers, pulse oximeters, key finders, running and cycling sensors",
        advertisement: AdvertisementDescription(serviceUUIDs: servedServices.map(GATTUUID.string(for:)), isFallback: true),
        sensors: [
            SensorDescription(.heartRate, .whenService("180d")),
            SensorDescription(.spo2, .whenService("1822")),
            SensorDescription(.temperature, unit: "°C", .whenService("1809")),
            SensorDescription(.running, .whenService("1814")),
            SensorDescription(.cycling, .whenService("1816")),
        ],
        events: [EventDescription("spot_check", "A pulse oximeter finished a spot-check measurement", service: "1822")],
        commands: [
            .refresh, .findByLevel, .timeSync,
            CommandDescription("reset_energy_expended", "Reset a heart-rate strap's energy expended to 0 (its Heart Rate Control Point)"),
        ] + CommandDescription.linkCommands + CommandDescription.firmwareUpdateCommands,
        firmwareUpdate: FirmwareUpdateDescription(.nordicDFU))
}
