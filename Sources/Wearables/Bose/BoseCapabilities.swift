/// What one Bose device offers, from its three information characteristics: which sensors (and at which
/// periods), which gestures, and how many sensors may run at once. Everything a configuration is checked
/// against before a byte is written.
public struct BoseCapabilities: Sendable, Equatable {
    public var device: BoseDeviceInformation
    public var sensorInformation: BoseSensorInformation
    public var gestureInformation: BoseGestureInformation

    public init(device: BoseDeviceInformation, sensorInformation: BoseSensorInformation,
                gestureInformation: BoseGestureInformation) {
        self.device = device
        self.sensorInformation = sensorInformation
        self.gestureInformation = gestureInformation
    }

    /// Sensors both announced in the device's mask and described in `SensorInformation` (without the latter
    /// their records cannot be framed or scaled).
    public var sensors: [BoseSensor] {
        device.availableSensors.filter { sensorInformation.entry(for: $0) != nil }
    }

    /// Gestures both in the device's mask and in `GestureInformation` with a configuration to switch them by (a
    /// configuration length of 0 leaves no byte to set; the SDK cannot configure such an entry either).
    public var gestures: [BoseGesture] {
        let listed = Set(gestureInformation.entries.filter { $0.configurationLength > 0 }.compactMap(\.gesture))
        return device.availableGestures.filter(listed.contains)
    }

    public func periods(of sensor: BoseSensor) -> [BoseSamplePeriod] {
        sensorInformation.entry(for: sensor)?.availablePeriods ?? []
    }

    public var maxActiveSensors: Int { Int(device.maxActiveSensors) }

    /// A configuration listing every sensor the device described, with `periods` for the enabled ones: the
    /// device replaces its whole configuration on a write.
    func sensorConfiguration(_ periods: [BoseSensor: UInt16]) -> BoseSensorConfiguration {
        BoseSensorConfiguration(entries: sensorInformation.entries.map { entry in
            .init(sensorID: entry.sensorID, periodMilliseconds: entry.sensor.flatMap { periods[$0] } ?? 0)
        })
    }

    /// Every gesture the device described, each entry as long as its configuration length: the state byte 0x01
    /// for the `enabled` ones and 0x00 otherwise, any further bytes 0 (unknown gestures: all 0, off).
    func gestureConfiguration(_ enabled: Set<BoseGesture>) -> BoseGestureConfiguration {
        BoseGestureConfiguration(entries: gestureInformation.entries.map { entry in
            var configuration = [UInt8](repeating: 0, count: Int(entry.configurationLength))
            if !configuration.isEmpty, let gesture = entry.gesture, enabled.contains(gesture) { configuration[0] = 0x01 }
            return .init(gestureID: entry.gestureID, configuration: configuration)
        })
    }

    /// The device state's `capabilities`, `sensor_service` and `device_status`.
    public var stateFields: [String: DeviceValue] {
        var sensorFields: [String: DeviceValue] = [:]
        for sensor in sensors {
            sensorFields[sensor.kind.rawValue] = .object([
                "periods_ms": .list(periods(of: sensor).map { .integer(Int64($0.rawValue)) }),
            ])
        }
        return [
            "capabilities": .object([
                "sensors": .object(sensorFields),
                "gestures": .list(gestures.map { .text($0.name) }),
                "max_active_sensors": .integer(Int64(device.maxActiveSensors)),
                "transmission_period_ms": .integer(Int64(device.transmissionPeriodMilliseconds)),
                "max_payload_bytes": .integer(Int64(device.maxPayloadPerTransmissionPeriod)),
            ]),
            "sensor_service": .object([
                "version": .text("\(device.majorVersion).\(device.minorVersion)"),
                "product_id": .integer(Int64(device.productID)),
                "variant": .integer(Int64(device.variant)),
            ]),
            "device_status": .object(device.status.fields),
        ]
    }
}
