import Testing

@testable import Wearables

/// Vectors laid out byte by byte as `InfiniTimeOrg/InfiniTime` `doc/SimpleWeatherService.md` numbers them.
@Suite("InfiniTime simple weather")
struct InfiniTimeWeatherTests {
    /// 2024-03-15 10:30:00 local = 1_710_498_600 s = 0x65F4_2328.
    static let timestampBytes: [UInt8] = [0x28, 0x23, 0xF4, 0x65, 0x00, 0x00, 0x00, 0x00]
    /// "Paris" NUL-padded to bytes 16–47.
    static let paris: [UInt8] = Array("Paris".utf8) + Array(repeating: 0, count: 27)

    /// [0] type 0, [1] version 0, [2–9] timestamp, [10–11] 12.34 °C, [12–13] −5.00 °C, [14–15] 20.00 °C,
    /// [16–47] location, [48] icon 5 (rain).
    static let currentVersion0: [UInt8] = [0x00, 0x00] + timestampBytes + [0xD2, 0x04, 0x0C, 0xFE, 0xD0, 0x07] + paris + [0x05]
    /// Version 1 adds [49–50] sunrise 07:15 (435 = 0x01B3) and [51–52] sunset 19:45 (1185 = 0x04A1).
    static let currentVersion1: [UInt8] = [0x00, 0x01] + Array(currentVersion0.dropFirst(2)) + [0xB3, 0x01, 0xA1, 0x04]
    /// [0] type 1, [1] version 0, [2–9] timestamp, [10] 3 days, then min, max, icon per day; days 3 and 4 zero.
    static let forecastThreeDays: [UInt8] = [0x01, 0x00] + timestampBytes + [0x03]
        + [0x2C, 0x01, 0xE8, 0x03, 0x00] // 3.00 … 10.00 °C, clear sky
        + [0x9C, 0xFF, 0xF4, 0x01, 0x07] // −1.00 … 5.00 °C, snow
        + [0x00, 0x00, 0x64, 0x00, 0x08] // 0.00 … 1.00 °C, mist
        + Array(repeating: 0, count: 10)

    static func temperature(_ hundredths: Int16) -> InfiniTimeTemperature {
        InfiniTimeTemperature(hundredthsOfDegreeCelsius: hundredths)
    }

    static func day(_ minimum: Int16, _ maximum: Int16, _ icon: InfiniTimeWeatherIcon) -> InfiniTimeForecast.Day {
        InfiniTimeForecast.Day(minimumTemperature: temperature(minimum), maximumTemperature: temperature(maximum), icon: icon)
    }

    static let parisRain = InfiniTimeCurrentWeather(
        timestamp: 1_710_498_600, temperature: temperature(1234), minimumTemperature: temperature(-500),
        maximumTemperature: temperature(2000), location: "Paris", icon: .rain)

    @Test("current weather, version 0: 49 bytes as the doc numbers them")
    func currentVersion0() throws {
        #expect(Self.currentVersion0.count == 49)
        #expect(InfiniTimeWeatherMessage.current(Self.parisRain).encode() == Self.currentVersion0)
        #expect(try InfiniTimeWeatherMessage.decode(Self.currentVersion0) == .current(Self.parisRain))
        #expect(Self.parisRain.temperature.celsius == 12.34)
    }

    @Test("current weather, version 1: sunrise and sunset in minutes after midnight, 53 bytes")
    func currentVersion1() throws {
        let sun = try InfiniTimeSunTimes(sunrise: 435, sunset: 1185)
        let weather = InfiniTimeCurrentWeather(
            timestamp: 1_710_498_600, temperature: Self.temperature(1234), minimumTemperature: Self.temperature(-500),
            maximumTemperature: Self.temperature(2000), location: "Paris", icon: .rain, sunTimes: sun)
        #expect(Self.currentVersion1.count == 53)
        #expect(InfiniTimeWeatherMessage.current(weather).encode() == Self.currentVersion1)
        #expect(try InfiniTimeWeatherMessage.decode(Self.currentVersion1) == .current(weather))
    }

    @Test("sun times the firmware's CreateCurrentWeather discards are refused; polar day and night are kept")
    func sunTimes() throws {
        #expect(throws: GATTCodecError.outOfRange(field: "sunrise", value: -1)) {
            try InfiniTimeSunTimes(sunrise: -1, sunset: 600)
        }
        #expect(throws: GATTCodecError.outOfRange(field: "sunset", value: -1)) {
            try InfiniTimeSunTimes(sunrise: 400, sunset: -1)
        }
        #expect(throws: GATTCodecError.outOfRange(field: "sunset", value: 1440)) {
            try InfiniTimeSunTimes(sunrise: 400, sunset: 1440)
        }
        #expect(throws: GATTCodecError.outOfRange(field: "sunset", value: 400)) {
            try InfiniTimeSunTimes(sunrise: 500, sunset: 400)
        }
        #expect(throws: GATTCodecError.outOfRange(field: "sunset", value: 600)) {
            try InfiniTimeSunTimes(sunrise: -2, sunset: 600)
        }
        _ = try InfiniTimeSunTimes(sunrise: -2, sunset: -2) // polar night
        _ = try InfiniTimeSunTimes(sunrise: 0, sunset: -2) // polar day: up at midnight, never sets
        // A version 1 message with a pair the firmware discards reads as no sun times, as the watch keeps it.
        var bad = Self.currentVersion1
        bad[49] = 0xFF
        bad[50] = 0xFF
        guard case .current(let weather) = try InfiniTimeWeatherMessage.decode(bad) else {
            Issue.record("not current weather")
            return
        }
        #expect(weather.sunTimes == nil && weather.version == 0)
    }

    @Test("forecast: 36 bytes, the day count at [10], unused days zero")
    func forecast() throws {
        let days = [Self.day(300, 1000, .clearSky), Self.day(-100, 500, .snow), Self.day(0, 100, .mist)]
        let forecast = try InfiniTimeForecast(timestamp: 1_710_498_600, days: days)
        #expect(Self.forecastThreeDays.count == 36)
        #expect(InfiniTimeWeatherMessage.forecast(forecast).encode() == Self.forecastThreeDays)
        #expect(try InfiniTimeWeatherMessage.decode(Self.forecastThreeDays) == .forecast(forecast))
        // The firmware reads no further than the last used day, so a message ending there is the same forecast.
        #expect(try InfiniTimeWeatherMessage.decode(Array(Self.forecastThreeDays.prefix(26))) == .forecast(forecast))
        for length in 0..<26 {
            #expect(throws: GATTCodecError.self) {
                try InfiniTimeWeatherMessage.decode(Array(Self.forecastThreeDays.prefix(length)))
            }
        }
        #expect(throws: GATTCodecError.truncated(expected: 36, actual: 37)) {
            try InfiniTimeWeatherMessage.decode(Self.forecastThreeDays + [0])
        }
    }

    @Test("every prefix of a current weather message is truncated, and so is a longer one")
    func currentTruncations() {
        for vector in [Self.currentVersion0, Self.currentVersion1] {
            for length in 0..<vector.count {
                do {
                    _ = try InfiniTimeWeatherMessage.decode(Array(vector.prefix(length)))
                    Issue.record("a \(length)-byte prefix decoded")
                } catch {
                    guard case .truncated(let expected, let actual) = error, actual == length, expected > length else {
                        Issue.record("a \(length)-byte prefix threw \(error)")
                        continue
                    }
                }
            }
            #expect(throws: GATTCodecError.truncated(expected: vector.count, actual: vector.count + 1)) {
                try InfiniTimeWeatherMessage.decode(vector + [0])
            }
        }
    }

    @Test("the firmware's limits: 5 days, versions 0–1 and 0, types 0–1, icons 0–8 and 255")
    func limits() throws {
        let six = Array(repeating: Self.day(0, 0, .clouds), count: 6)
        #expect(throws: GATTCodecError.outOfRange(field: "forecast days", value: 6)) {
            try InfiniTimeForecast(timestamp: 0, days: six)
        }
        var sixDays = Self.forecastThreeDays
        sixDays[10] = 6
        #expect(throws: GATTCodecError.outOfRange(field: "forecast days", value: 6)) {
            try InfiniTimeWeatherMessage.decode(sixDays)
        }
        var version2 = Self.currentVersion0
        version2[1] = 2
        #expect(throws: GATTCodecError.reservedValue(field: "current weather version", value: 2)) {
            try InfiniTimeWeatherMessage.decode(version2)
        }
        var forecastVersion1 = Self.forecastThreeDays
        forecastVersion1[1] = 1
        #expect(throws: GATTCodecError.reservedValue(field: "forecast version", value: 1)) {
            try InfiniTimeWeatherMessage.decode(forecastVersion1)
        }
        #expect(throws: GATTCodecError.unknownIdentifier(field: "weather message type", value: 2)) {
            try InfiniTimeWeatherMessage.decode([0x02, 0x00])
        }
        var icon9 = Self.currentVersion0
        icon9[48] = 9
        #expect(throws: GATTCodecError.reservedValue(field: "weather icon", value: 9)) {
            try InfiniTimeWeatherMessage.decode(icon9)
        }
        icon9[48] = 255
        #expect(throws: Never.self) { try InfiniTimeWeatherMessage.decode(icon9) }
    }

    @Test("the location is fitted to 32 bytes between characters; temperatures round to hundredths within int16")
    func fitting() throws {
        let long = InfiniTimeCurrentWeather(
            timestamp: 0, temperature: Self.temperature(0), minimumTemperature: Self.temperature(0),
            maximumTemperature: Self.temperature(0), location: "Llanfairpwllgwyngyll " + String(repeating: "ö", count: 10),
            icon: .clouds)
        // 21 ASCII bytes and five two-byte "ö" make 31; a sixth would need 33.
        #expect(long.location == "Llanfairpwllgwyngyll ööööö")
        #expect(try InfiniTimeTemperature(celsius: 21.456).hundredthsOfDegreeCelsius == 2146)
        #expect(try InfiniTimeTemperature(celsius: -40).hundredthsOfDegreeCelsius == -4000)
        #expect(throws: GATTCodecError.outOfRange(field: "temperature", value: 40000)) {
            try InfiniTimeTemperature(celsius: 400)
        }
    }
}
