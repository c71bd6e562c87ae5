import BlueZ

/// The drivers the gateway knows, and the choice among them for a device. Adding a vendor adds one line to
/// `WearableDrivers.all`.
public struct DriverRegistry: Sendable {
    public let drivers: [any WearableDriver.Type]

    public init(_ drivers: [any WearableDriver.Type]) { self.drivers = drivers }

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
