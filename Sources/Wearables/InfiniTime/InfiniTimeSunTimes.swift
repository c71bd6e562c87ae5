/// Today's sunrise and sunset in minutes after local midnight, the two fields version 1 of the current-weather
/// message adds (InfiniTime 1.16 and later).
///
/// Sources: `InfiniTimeOrg/InfiniTime` `doc/SimpleWeatherService.md` ("Sunrise", "Sunset": `int16`, 0 = the sun is
/// already up when the day starts, −1 unknown, −2 no sunrise / no sunset) and `CreateCurrentWeather` in
/// `src/components/ble/SimpleWeatherService.cpp`, which throws both away (keeps −1, unknown) unless: neither is
/// −1, both lie in −2…1439, a missing sunrise comes with a missing sunset, and a sunrise comes before its sunset.
/// This type only holds pairs the firmware keeps; "unknown" is no `InfiniTimeSunTimes` at all (a version 0
/// message), which every InfiniTime 1.14+ reads.
public struct InfiniTimeSunTimes: Hashable, Sendable {
    /// In `sunrise`: the sun does not rise today (polar night). In `sunset`: it does not set (polar day).
    public static let none: Int16 = -2
    /// The firmware's "unknown" (−1): never held here, since the firmware discards the pair.
    static let unknown: Int16 = -1
    public static let minutesPerDay: Int16 = 1440

    public let sunrise: Int16
    public let sunset: Int16

    /// Throws `outOfRange` for a pair `CreateCurrentWeather` would discard: naming the sunrise when it alone is
    /// unusable (−1 or outside −2…1439), else the sunset (unusable itself, or not after the sunrise).
    public init(sunrise: Int16, sunset: Int16) throws(GATTCodecError) {
        guard Self.firmwareKeeps(sunrise: sunrise, sunset: sunset) else {
            let sunriseIsBad = sunrise == Self.unknown || !Self.isMinute(sunrise)
            throw .outOfRange(field: sunriseIsBad ? "sunrise" : "sunset", value: Int(sunriseIsBad ? sunrise : sunset))
        }
        self.sunrise = sunrise
        self.sunset = sunset
    }

    /// The firmware's check, restated: which pairs `CreateCurrentWeather` stores.
    static func firmwareKeeps(sunrise: Int16, sunset: Int16) -> Bool {
        guard sunrise != unknown, sunset != unknown, isMinute(sunrise), isMinute(sunset) else { return false }
        if sunrise == none { return sunset == none }
        return !(sunrise >= 0 && sunset >= 0 && sunrise >= sunset)
    }

    private static func isMinute(_ value: Int16) -> Bool { (none...(minutesPerDay - 1)).contains(value) }
}
