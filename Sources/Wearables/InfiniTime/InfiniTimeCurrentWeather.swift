/// The Simple Weather Service's current-weather message (type 0), written to `00050001-…`: 49 bytes in version 0,
/// 53 in version 1 (with sunrise and sunset). Little-endian throughout.
///
/// | bytes | field |
/// | --- | --- |
/// | 0 | message type 0 |
/// | 1 | version: 0, or 1 with the sun times (InfiniTime 1.16+) |
/// | 2–9 | timestamp, `uint64`, seconds since 1970 in **local** time (the zone the watch's clock was set in) |
/// | 10–11, 12–13, 14–15 | temperature, minimum, maximum (`InfiniTimeTemperature`) |
/// | 16–47 | location, UTF-8, NUL-padded to 32 bytes |
/// | 48 | icon (`InfiniTimeWeatherIcon`) |
/// | 49–50, 51–52 | version 1: sunrise, sunset (`InfiniTimeSunTimes`) |
///
/// Sources: `InfiniTimeOrg/InfiniTime` `doc/SimpleWeatherService.md` ("Current Weather") and
/// `src/components/ble/SimpleWeatherService.cpp` (`CreateCurrentWeather`, `OnCommand`: version ≤ 1 taken since
/// 1.16.0, only version 0 before — 1.14 and 1.15 ignore a version 1 message, so the driver sends sun times only
/// to 1.16+; `Current()`: the watch stops showing weather whose timestamp is 24 h old). The firmware reads the
/// fields without checking the write's length; this decoder needs every byte and refuses extra ones.
public struct InfiniTimeCurrentWeather: Hashable, Sendable {
    public static let messageType: UInt8 = 0
    public static let locationByteCount = 32
    public static let version0ByteCount = 49
    public static let version1ByteCount = 53

    public let timestamp: UInt64
    public let temperature: InfiniTimeTemperature
    public let minimumTemperature: InfiniTimeTemperature
    public let maximumTemperature: InfiniTimeTemperature
    /// At most 32 UTF-8 bytes, no NUL.
    public let location: String
    public let icon: InfiniTimeWeatherIcon
    /// Nil sends version 0, which every InfiniTime since 1.14 reads; a value sends version 1.
    public let sunTimes: InfiniTimeSunTimes?

    /// `location` is fitted to 32 bytes between two characters (NUL characters dropped).
    public init(timestamp: UInt64, temperature: InfiniTimeTemperature, minimumTemperature: InfiniTimeTemperature,
                maximumTemperature: InfiniTimeTemperature, location: String, icon: InfiniTimeWeatherIcon,
                sunTimes: InfiniTimeSunTimes? = nil) {
        self.timestamp = timestamp
        self.temperature = temperature
        self.minimumTemperature = minimumTemperature
        self.maximumTemperature = maximumTemperature
        self.location = InfiniTimeText.fitted(location, maximumByteCount: Self.locationByteCount)
        self.icon = icon
        self.sunTimes = sunTimes
    }

    public var version: UInt8 { sunTimes == nil ? 0 : 1 }

    /// A version above 1 is `reservedValue`; a sunrise/sunset pair the firmware would discard decodes as no sun
    /// times, as on the watch.
    static func read(from reader: inout ByteReader) throws(GATTCodecError) -> InfiniTimeCurrentWeather {
        let version = try reader.readUInt8()
        guard version <= 1 else { throw .reservedValue(field: "current weather version", value: Int(version)) }
        let timestamp = try reader.read(UInt64.self)
        let temperature = try InfiniTimeTemperature.read(from: &reader)
        let minimum = try InfiniTimeTemperature.read(from: &reader)
        let maximum = try InfiniTimeTemperature.read(from: &reader)
        let location = try InfiniTimeText.decode(try reader.readBytes(locationByteCount))
        let icon = try InfiniTimeWeatherIcon.read(from: &reader)
        var sunTimes: InfiniTimeSunTimes?
        if version == 1 {
            let sunrise = try reader.readInt16()
            let sunset = try reader.readInt16()
            sunTimes = try? InfiniTimeSunTimes(sunrise: sunrise, sunset: sunset)
        }
        return InfiniTimeCurrentWeather(timestamp: timestamp, temperature: temperature, minimumTemperature: minimum,
                                        maximumTemperature: maximum, location: location, icon: icon, sunTimes: sunTimes)
    }

    func write(to writer: inout ByteWriter) {
        writer.write(Self.messageType)
        writer.write(version)
        writer.write(timestamp)
        temperature.write(to: &writer)
        minimumTemperature.write(to: &writer)
        maximumTemperature.write(to: &writer)
        let name = Array(location.utf8)
        writer.write(contentsOf: name)
        writer.write(contentsOf: repeatElement(UInt8(0), count: Self.locationByteCount - name.count))
        writer.write(icon.rawValue)
        if let sunTimes {
            writer.write(sunTimes.sunrise)
            writer.write(sunTimes.sunset)
        }
    }
}
