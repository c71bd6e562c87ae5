import FoundationEssentials

extension DeviceLink {
    /// `find` through Immediate Alert 0x1802: the standard knows alert levels, not vibration counts, so any
    /// count but 0 is a high alert. Answers the level written.
    public func immediateAlert(vibrations: Int?, level: AlertLevel?) async throws(CommandError) -> DeviceValue {
        guard let alert = characteristic(GATTUUID.string(for: GATTUUID.Characteristic.alertLevel)) else {
            throw CommandError(.notSupported, "this device has no Immediate Alert service")
        }
        let chosen = level ?? (vibrations == 0 ? .none : .high)
        try await write(alert, chosen.encode(), withResponse: false)
        return .object(["level": .text(chosen.name)])
    }

    /// `time_sync` through Current Time 0x2A2B: the gateway's clock in its local time zone.
    public func writeCurrentTime() async throws(CommandError) {
        guard let currentTime = characteristic(GATTUUID.string(for: GATTUUID.Characteristic.currentTime)),
              currentTime.flags.contains("write") else {
            throw CommandError(.notSupported, "this device has no writable Current Time characteristic")
        }
        let now = Date(timeIntervalSince1970: Double(time.unixMilliseconds) / 1000)
        guard let current = try? CurrentTime(date: now, timeZone: .current, adjustReason: [.manualTimeUpdate]) else {
            throw CommandError(.internalError, "the gateway's clock cannot be expressed as a Current Time value")
        }
        try await write(currentTime, current.encode(), withResponse: true)
    }
}
