/// `request/weather`: the current weather and a forecast for the watch's Simple Weather Service (InfiniTime 1.14+).
///
/// ```
/// {"current":{"temperature":21.5,"min":15,"max":24,"location":"Paris","icon":"clouds","sunrise":"07:12","sunset":"19:45"},
///  "forecast":[{"min":12,"max":20,"icon":"rain"}, …]}
/// ```
/// Either part or both. Temperatures are °C (the watch converts to °F itself); `min` and `max` default to
/// `temperature`, `icon` to `unknown`, `location` to none. `sunrise`/`sunset` are the watch's local "HH:MM" (or
/// "none" for a sun that does not rise/set today), both or neither; they need message version 1, which only 1.16.0
/// and later read, so for older firmware they are left out (`sun_times_sent: false`) rather than losing the whole
/// message. The forecast has at most 5 days, from today. Timestamps are the watch's local time (`localTimestamp`),
/// as the firmware compares them with its own clock.
public struct InfiniTimeWeatherRequest: Sendable, Equatable {
    public static let fields = ["current", "forecast"]
    static let currentFields = ["temperature", "min", "max", "location", "icon", "sunrise", "sunset"]
    static let dayFields = ["min", "max", "icon"]

    public let messages: [InfiniTimeWeatherMessage]
    /// Sunrise and sunset were asked for but the firmware cannot take them.
    public let sunTimesDropped: Bool

    public init(_ reader: RequestReader, localTimestamp: UInt64, sunTimesSupported: Bool) throws(CommandError) {
        try reader.rejectUnknownFields(allowed: Self.fields, request: "weather")
        var messages: [InfiniTimeWeatherMessage] = []
        var dropped = false
        if let current = try reader.nested("current") {
            try current.rejectUnknownFields(allowed: Self.currentFields, request: "weather current")
            let temperature = try current.required(try Self.temperature(current, "temperature"), "temperature",
                                                   "the temperature now in °C")
            let minimum = try Self.temperature(current, "min") ?? temperature
            let maximum = try Self.temperature(current, "max") ?? temperature
            let location = try current.string("location") ?? ""
            let icon = try Self.icon(current)
            var sunTimes = try Self.sunTimes(current)
            if sunTimes != nil, !sunTimesSupported {
                sunTimes = nil
                dropped = true
            }
            messages.append(.current(InfiniTimeCurrentWeather(
                timestamp: localTimestamp, temperature: temperature, minimumTemperature: minimum,
                maximumTemperature: maximum, location: location, icon: icon, sunTimes: sunTimes)))
        }
        if let days = try reader.nestedList("forecast") {
            guard (1...InfiniTimeForecast.maximumDayCount).contains(days.count) else {
                throw reader.invalid("forecast", "must list 1 to \(InfiniTimeForecast.maximumDayCount) days", got: .integer(Int64(days.count)))
            }
            var forecastDays: [InfiniTimeForecast.Day] = []
            for day in days {
                try day.rejectUnknownFields(allowed: Self.dayFields, request: "a forecast day")
                let minimum = try day.required(try Self.temperature(day, "min"), "min", "the day's lowest °C")
                let maximum = try day.required(try Self.temperature(day, "max"), "max", "the day's highest °C")
                forecastDays.append(InfiniTimeForecast.Day(minimumTemperature: minimum, maximumTemperature: maximum,
                                                           icon: try Self.icon(day)))
            }
            do { messages.append(.forecast(try InfiniTimeForecast(timestamp: localTimestamp, days: forecastDays))) }
            catch { throw .invalid(reader, "forecast", error, got: nil) }
        }
        guard !messages.isEmpty else { throw CommandError(.invalidValue, "weather needs current, forecast or both") }
        self.messages = messages
        sunTimesDropped = dropped
    }

    static func temperature(_ reader: RequestReader, _ key: String) throws(CommandError) -> InfiniTimeTemperature? {
        guard let value = reader.arguments[key] else { return nil }
        guard let celsius = value.number else { throw reader.invalid(key, "must be a number of °C", got: value) }
        do { return try InfiniTimeTemperature(celsius: celsius) } catch {
            throw reader.invalid(key, "must be from -327.68 to 327.67 °C", got: value)
        }
    }

    static func icon(_ reader: RequestReader) throws(CommandError) -> InfiniTimeWeatherIcon {
        guard let name = try reader.choice("icon", from: InfiniTimeWeatherIcon.allCases.map(\.contractName)) else {
            return .unknown
        }
        return InfiniTimeWeatherIcon.allCases.first { $0.contractName == name } ?? .unknown
    }

    static func sunTimes(_ reader: RequestReader) throws(CommandError) -> InfiniTimeSunTimes? {
        let sunrise = try minutes(reader, "sunrise")
        let sunset = try minutes(reader, "sunset")
        switch (sunrise, sunset) {
        case (nil, nil): return nil
        case (let rise?, let set?):
            do { return try InfiniTimeSunTimes(sunrise: rise, sunset: set) } catch {
                throw CommandError(.invalidValue, "\(reader.name("sunrise")) must come before \(reader.name("sunset")), and \"none\" for one needs \"none\" for both")
            }
        default:
            throw CommandError(.invalidValue, "\(reader.name("sunrise")) and \(reader.name("sunset")) go together: give both or neither")
        }
    }

    /// "HH:MM" as minutes after midnight, "none" as the firmware's −2.
    static func minutes(_ reader: RequestReader, _ key: String) throws(CommandError) -> Int16? {
        guard let text = try reader.string(key) else { return nil }
        if text == "none" { return InfiniTimeSunTimes.none }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCII) }),
              let hours = Int16(parts[0]), let minutes = Int16(parts[1]),
              (0...23).contains(hours), (0...59).contains(minutes) else {
            throw reader.invalid(key, "must be a local time \"HH:MM\" or \"none\"", got: .text(text))
        }
        return hours * 60 + minutes
    }

    public var answer: DeviceValue {
        var parts: [DeviceValue] = []
        var sunTimesSent = false
        for message in messages {
            switch message {
            case .current(let weather):
                parts.append("current")
                sunTimesSent = weather.sunTimes != nil
            case .forecast: parts.append("forecast")
            }
        }
        var answer: [String: DeviceValue] = ["sent": .list(parts)]
        if sunTimesDropped || sunTimesSent { answer["sun_times_sent"] = .flag(sunTimesSent) }
        return .object(answer)
    }
}

extension InfiniTimeWeatherIcon {
    /// snake_case, as requests write it.
    public var contractName: String {
        switch self {
        case .clearSky: "clear_sky"
        case .fewClouds: "few_clouds"
        case .clouds: "clouds"
        case .heavyClouds: "heavy_clouds"
        case .cloudsAndRain: "clouds_and_rain"
        case .rain: "rain"
        case .thunderstorm: "thunderstorm"
        case .snow: "snow"
        case .mist: "mist"
        case .unknown: "unknown"
        }
    }
}
