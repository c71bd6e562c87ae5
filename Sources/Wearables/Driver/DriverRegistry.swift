import BlueZ

/// The drivers the gateway knows, and the choice among them for a device. Adding a vendor adds one line to
/// `WearableDrivers.all`.
public struct DriverRegistry: Sendable {
    public let drivers: [any WearableDriver.Type]

    /// The driver a device gets while no other claims it (the standard profiles): the one whose description says so.
    public let fallback: any WearableDriver.Type
    /// Every command some driver accepts, by name: the first description of each (contract commands are described
    /// alike by every driver; a driver's own have one).
    public let commandsByName: [String: CommandDescription]

    public init(_ drivers: [any WearableDriver.Type]) {
        let fallbacks = drivers.filter { driver in driver.driverDescription.advertisement.isFallback }
        precondition(fallbacks.count == 1, "exactly one fallback driver")
        self.drivers = drivers
        fallback = fallbacks[0]
        var commands: [String: CommandDescription] = [:]
        for driver in drivers { for command in driver.driverDescription.commands where commands[command.name] == nil { commands[command.name] = command } }
        commandsByName = commands
    }

    /// Whether a request runs long, decided as it arrives, before its device is looked up: long if any driver's
    /// description of the command says so for these fields (a command's name belongs to one family, or to the
    /// contract, whose commands every driver describes alike).
    public func runsLong(_ command: String, _ arguments: [String: DeviceValue]) -> Bool {
        drivers.contains { $0.driverDescription.command(command)?.duration.isLong(arguments) ?? false }
    }

    public func driver(named name: String) -> (any WearableDriver.Type)? {
        drivers.first { $0.name == name }
    }

    /// The best match for `device`, the first registered winning a tie; nil when no driver fits.
    public func bestMatch(for device: Advertisement) -> (any WearableDriver.Type)? {
        var best: (driver: any WearableDriver.Type, match: DriverMatch)?
        for driver in drivers {
            guard let match = driver.match(device) else { continue }
            if best == nil || match > best!.match { best = (driver, match) }
        }
        return best?.driver
    }
}

public enum WearableDrivers {
    /// Every driver, vendor drivers first so that on a tie they win over the generic one.
    public static let all = DriverRegistry([BoseWearableDriver.self, EmpaticaE4Driver.self, GoFITDriver.self, ActiGraphDriver.self, PolarDriver.self,
                                                InfiniTimeDriver.self,
                                                StandardGATTDriver.self])
}
