import BlueZ

/// Battery Service 0x180F for drivers whose devices use the standard one: read once per connection, then
/// follow its notifications when it offers them.
extension DeviceLink {
    private var batteryLevel: GattCharacteristicInfo? {
        characteristic(GATTUUID.string(for: GATTUUID.Characteristic.batteryLevel))
    }

    /// The level in percent, nil when the device has no Battery Level or its value cannot be read.
    public func readBatteryPercent() async -> Int? {
        guard let batteryLevel, let bytes = try? await read(batteryLevel) else { return nil }
        return (try? BatteryLevel.decode(bytes)).map { Int($0.percent) }
    }

    /// Battery Level notifications as `battery` in the state, for `runSession`; nil when the characteristic does
    /// not notify (the level read at connection time then stands until a `refresh`).
    public func batteryNotifications() -> NotificationHandler? {
        guard let batteryLevel, batteryLevel.flags.contains("notify") else { return nil }
        return NotificationHandler(batteryLevel) { emitBattery($0) }
    }

    /// One Battery Level notification as `battery` in the state; a malformed one is ignored.
    public func emitBattery(_ bytes: [UInt8]) {
        guard let level = try? BatteryLevel.decode(bytes) else { return }
        emit(.state(["battery": .integer(Int64(level.percent))]))
    }
}
