import BlueZ
import FoundationEssentials

extension InfiniTimeDriver {
    /// (A part that seems missing because the link went during the command is answered `DEVICE_DISCONNECTED` by
    /// the session, for every driver.)
    public func execute(_ command: DeviceCommand, link: DeviceLink) async throws(CommandError) -> DeviceValue {
        switch command {
        case .refresh:
            await readInformation(link)
            return .object([:])
        case .find(let vibrations, let level):
            return try await link.immediateAlert(vibrations: vibrations, level: level)
        case .timeSync:
            return try await setTime(link)
        case .named("notify", let arguments):
            let request = try InfiniTimeNotifyRequest(RequestReader(arguments))
            try await write([InfiniTimeCharacteristicWrite(InfiniTimeUUID.Standard.newAlert, request.alert.encode(), field: "notify")],
                            link: link, missing: "an Alert Notification service")
            return request.answer
        case .named("music", let arguments):
            let request = try InfiniTimeMusicRequest(RequestReader(arguments))
            try await write(request.writes, link: link, missing: "this part of the music service (InfiniTime 0.9 added position, length and the rest)")
            return .object(["written": .list(request.writes.map { .text($0.field) }),
                            "truncated": .list(request.truncated.map(DeviceValue.text))])
        case .named("navigation", let arguments):
            let request = try InfiniTimeNavigationRequest(RequestReader(arguments))
            try await write(request.writes, link: link, missing: "the navigation service (InfiniTime 0.11 or later)")
            return .object(["written": .list(request.writes.map { .text($0.field) }),
                            "truncated": .list(request.truncated.map(DeviceValue.text))])
        case .named("weather", let arguments):
            return try await weather(arguments, link: link)
        default:
            throw CommandError(.notSupported, "\(command.name) is not supported by InfiniTime watches")
        }
    }

    /// Simple Weather, on 1.14 or later; sun times only where the firmware reads message version 1.
    private func weather(_ arguments: [String: DeviceValue], link: DeviceLink) async throws(CommandError) -> DeviceValue {
        guard let characteristic = link.characteristic(InfiniTimeUUID.Characteristic.weatherData) else {
            let running = firmware.map { " (this watch runs \($0))" } ?? ""
            throw CommandError(.notSupported, "this watch has no Simple Weather service; InfiniTime 1.14 or later has it\(running)")
        }
        let sunTimes = firmware.map { $0 >= .weatherSunTimes } ?? false
        let request = try InfiniTimeWeatherRequest(RequestReader(arguments), localTimestamp: Self.localSeconds(link.now),
                                                   sunTimesSupported: sunTimes)
        for message in request.messages {
            try await link.write(characteristic, message.encode(), withResponse: characteristic.flags.contains("write"),
                                 rejected: { Self.refused("weather", $0) })
        }
        return request.answer
    }

    /// The gateway's wall clock in its own time zone, as seconds since 1970 read as local time: what the watch's
    /// clock shows after `time_sync`, and what its weather timestamps are compared with.
    static func localSeconds(_ unixMilliseconds: Int64) -> UInt64 {
        let date = Date(timeIntervalSince1970: Double(unixMilliseconds) / 1000)
        return UInt64(max(0, unixMilliseconds / 1000 + Int64(TimeZone.current.secondsFromGMT(for: date))))
    }

    /// Writes `writes` in order; a characteristic the watch lacks is `NOT_SUPPORTED` before anything is written.
    private func write(_ writes: [InfiniTimeCharacteristicWrite], link: DeviceLink, missing what: String) async throws(CommandError) {
        var targets: [(GattCharacteristicInfo, InfiniTimeCharacteristicWrite)] = []
        for write in writes {
            guard let characteristic = link.characteristic(write.characteristic) else {
                    throw CommandError(.notSupported, "\(write.field): this watch has no \(what)")
            }
            targets.append((characteristic, write))
        }
        for (characteristic, write) in targets {
            try await link.write(characteristic, write.bytes, withResponse: characteristic.flags.contains("write"),
                                 rejected: { Self.refused(write.field, $0) })
        }
    }

    /// A write the watch answered with an ATT error: InfiniTime documents none, so it is reported as it came.
    static func refused(_ field: String, _ code: UInt8) -> CommandError {
        CommandError(.internalError, "the watch refused the write of \(field) (ATT error 0x\(String(code, radix: 16)))",
                     vendorCode: Int(code))
    }

    /// Current Time (the local wall time), then Local Time Information when the watch has it (1.12+), so its UTC
    /// is right too. The DST offset is always a real one: InfiniTime would read "unknown" (255) as −1.
    func setTime(_ link: DeviceLink) async throws(CommandError) -> DeviceValue {
        try await link.writeCurrentTime()
        guard let zone = link.characteristic(GATTUUID.string(for: GATTUUID.Characteristic.localTimeInformation)),
              zone.flags.contains("write") else {
            return .object(["time_zone": .flag(false)])
        }
        let timeZone = TimeZone.current
        let now = Date(timeIntervalSince1970: Double(link.time.unixMilliseconds) / 1000)
        let information: LocalTimeInformation
        do {
            information = try LocalTimeInformation(secondsFromUTC: timeZone.secondsFromGMT(for: now),
                                                   daylightSavingSeconds: Int(timeZone.daylightSavingTimeOffset(for: now)))
        } catch {
            link.logger.info("the gateway's time zone has no Local Time Information encoding; the watch keeps its own",
                             metadata: ["zone": "\(timeZone.identifier)"])
            return .object(["time_zone": .flag(false)])
        }
        try await link.write(zone, information.encode(), withResponse: true)
        return .object(["time_zone": .flag(true)])
    }
}
