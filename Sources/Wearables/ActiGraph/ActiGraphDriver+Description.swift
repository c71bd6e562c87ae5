extension ActiGraphDriver {
    public static let driverDescription = DriverDescription(
        name: "actigraph", vendor: "ActiGraph",
        summary: "ActiGraph wGT3X-BT / GT9X Link activity monitors: raw acceleration, IMU streams and epoch downloads",
        advertisement: AdvertisementDescription(serviceUUIDs: [ActiGraphUUID.service], namePrefixes: ["TAS"]),
        sensors: [
            SensorDescription(.accelerometer, unit: "g", .whenConfigured),
            SensorDescription(.gyroscope, unit: "°/s", .whenConfigured),
            SensorDescription(.magnetometer, unit: "µT", .whenConfigured),
        ],
        commands: [
            // The SDK asks for an epoch download through configure's `epoch` section: that one runs long.
            .configure([
                ArgumentDescription("sensors", .object, "accelerometer {\"enabled\",\"rate_hz\"}, gyroscope and magnetometer {\"enabled\"}"),
                ArgumentDescription("raw_stream", .flag, "stream raw acceleration"),
                ArgumentDescription("imu", .object, "per IMU sensor: true or false"),
                ArgumentDescription("epoch", .object, "download epochs (the SDK's way)"),
            ], duration: .longWhen(field: "epoch")),
            .sync, .refresh, .timeSync,
        ] + CommandDescription.linkCommands,
        recordKinds: ["epoch"],
        existingConnectionVendorCode: 10)
}
