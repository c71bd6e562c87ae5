import Wearables

extension FuzzTarget {
    /// The Bluetooth SIG characteristics the standard driver reads (heart rate, battery, device information,
    /// time, pulse oximeter, thermometer, running and cycling speed, alert level).
    static let standardGATT = FuzzTarget(
        name: "gatt",
        summary: "Bluetooth SIG characteristics (heart rate, battery, DIS, time, PLX, thermometer, RSC, CSC, alert)"
    ) { bytes in
        for type in characteristicTypes { checkStable(type, bytes) }
        _ = try? DeviceInformationString.decode(bytes)
    }

    static let characteristicTypes: [any GATTCharacteristicValue.Type] = [
        HeartRateMeasurement.self, BodySensorLocation.self, HeartRateControlPointCommand.self, BatteryLevel.self,
        SystemID.self, PnPID.self, AlertLevel.self, CurrentTime.self, PLXSpotCheckMeasurement.self,
        PLXContinuousMeasurement.self, TemperatureMeasurement.self, RunningSpeedCadenceMeasurement.self,
        CyclingSpeedCadenceMeasurement.self,
    ]
}

/// Decodes `bytes` as `Value` and, when that works, checks the value survives encode → decode.
func checkStable<Value: GATTCharacteristicValue>(_: Value.Type, _ bytes: [UInt8]) {
    guard let value = try? Value.decode(bytes) else { return }
    expectStable(value, { $0.encode() }, { try Value.decode($0) }, "\(Value.self)")
}
