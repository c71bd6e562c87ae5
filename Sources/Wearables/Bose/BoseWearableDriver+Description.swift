extension BoseWearableDriver {
    public static let driverDescription = DriverDescription(
        name: "bose", vendor: "Bose",
        summary: "Bose AR wearables (Frames, QC35 II, NC 700): head motion sensors and gestures, configured per device",
        advertisement: AdvertisementDescription(serviceUUIDs: [BoseUUID.service]),
        // The rates are the device's (its capabilities list the periods it offers).
        sensors: BoseSensor.allCases.map { SensorDescription($0.kind, unit: $0.unit, .whenConfigured) },
        events: [
            EventDescription("configuration_failed", "The device refused a configuration"),
            EventDescription("sensor_service_suspended", "The device paused its sensor service (another app, a call)"),
            EventDescription("sensor_service_resumed", "The sensor service is back"),
        ],
        commands: [.configure([
            ArgumentDescription("sensors", .object, "per sensor: {\"period_ms\":…} (0 stops it); all enabled sensors share one period"),
            ArgumentDescription("gestures", .object, "per gesture: true or false"),
        ]), .refresh] + CommandDescription.linkCommands)
}

extension BoseSensor {
    /// The unit of its samples' values (docs/protocols/bose.md); nil for a rotation's unitless quaternion.
    var unit: String? {
        switch self {
        case .accelerometer: "g"
        case .gyroscope: "°/s"
        case .magnetometer, .uncalibratedMagnetometer: "µT"
        case .orientation: "°"
        case .rotation, .gameRotation: nil
        }
    }
}
