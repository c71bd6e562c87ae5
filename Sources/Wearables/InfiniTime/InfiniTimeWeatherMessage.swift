/// One write to the Simple Weather Service's data characteristic (`00050001-…`, write only, since InfiniTime
/// 1.14): byte 0 says which message it is, byte 1 its version.
///
/// Source: `InfiniTimeOrg/InfiniTime` `doc/SimpleWeatherService.md` (the 2-byte header) and
/// `src/components/ble/SimpleWeatherService.cpp` (`GetMessageType`, `OnCommand`, which ignores other types and
/// versions without an error; this decoder refuses them so the simulator can tell).
public enum InfiniTimeWeatherMessage: Hashable, Sendable {
    case current(InfiniTimeCurrentWeather)
    case forecast(InfiniTimeForecast)

    /// A message type other than 0 and 1 is `unknownIdentifier`; see the two messages for the rest.
    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> InfiniTimeWeatherMessage {
        var reader = ByteReader(bytes)
        let type = try reader.readUInt8()
        switch type {
        case InfiniTimeCurrentWeather.messageType:
            let weather = try InfiniTimeCurrentWeather.read(from: &reader)
            try reader.expectEnd()
            return .current(weather)
        case InfiniTimeForecast.messageType:
            return .forecast(try InfiniTimeForecast.read(from: &reader))
        default:
            throw .unknownIdentifier(field: "weather message type", value: Int(type))
        }
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        switch self {
        case .current(let weather): weather.write(to: &writer)
        case .forecast(let forecast): forecast.write(to: &writer)
        }
        return writer.bytes
    }
}
