extension PolarDriver {
    public static let driverDescription = DriverDescription(
        name: "polar", vendor: "Polar Electro",
        summary: "Polar H10, H9, OH1 and Verity Sense (PMD): heart rate, ECG, PPG, PPI and motion; the H10's own recordings",
        advertisement: AdvertisementDescription(serviceUUIDs: [PolarUUID.Service.measurementData], namePrefixes: [PolarUUID.advertisedNamePrefix + " "]),
        // The rates each device offers are in its capabilities (`capabilities.sensors`).
        sensors: [
            SensorDescription(.heartRate),
            SensorDescription(.ecg, unit: "µV", ratesHz: [130], .whenConfigured),
            SensorDescription(.ppg, .whenConfigured),
            SensorDescription(.ppi, unit: "ms", .whenConfigured),
            SensorDescription(.accelerometer, unit: "g", ratesHz: [25, 50, 100, 200], .whenConfigured),
            SensorDescription(.gyroscope, unit: "°/s", .whenConfigured),
            SensorDescription(.magnetometer, unit: "µT", .whenConfigured),
        ],
        events: [
            EventDescription("measurement_stopped", "The sensor ended streams on its own (taken off)"),
            EventDescription("configuration_failed", "The streams asked for could not be started again after a reconnect"),
        ],
        commands: [
            .configure([
                ArgumentDescription("sensors", .object, "ecg, ppg, accelerometer, ppi, gyroscope, magnetometer: {\"enabled\",\"rate_hz\",\"range\",\"resolution\",\"channels\"}"),
            ]),
            .refresh,
            CommandDescription("recording", "The H10's recording on itself: start, stop, status, list, fetch, remove", arguments: [
                ArgumentDescription("action", .choice(H10RecordingCommand.actions), required: true, "what to do"),
                ArgumentDescription("identifier", .text, "the recording's name, 1 to 64 characters (start, fetch, remove)"),
                ArgumentDescription("sample_type", .choice(H10RecordingSampleType.allCases.map(\.rawValue)), "start: heart rate or RR intervals"),
                ArgumentDescription("interval_s", .integer(1...5), "start: 1 or 5 seconds"),
            ], duration: .longWhen(field: "action", values: ["fetch", "list"])),
        ] + CommandDescription.linkCommands,
        statusFlags: [StatusFlagDescription("recording", name: "Recording", statePath: ["recording", "active"],
                                            capabilityPath: ["capabilities", "recording"], icon: "mdi:record-rec")])
}
