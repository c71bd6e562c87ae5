/// The weather symbol of the Simple Weather Service, one byte.
///
/// Sources: `InfiniTimeOrg/InfiniTime` `doc/SimpleWeatherService.md` ("icon ID", 0–8) and `Icons` in
/// `src/components/ble/SimpleWeatherService.h`, which adds `Unknown = 255`. Other values are refused by the
/// decoder (`reservedValue`): the firmware would store them and draw whatever its symbol table's default is.
public enum InfiniTimeWeatherIcon: UInt8, Hashable, Sendable, CaseIterable {
    case clearSky = 0
    case fewClouds = 1
    case clouds = 2
    case heavyClouds = 3
    case cloudsAndRain = 4
    case rain = 5
    case thunderstorm = 6
    case snow = 7
    case mist = 8
    case unknown = 255

    static func read(from reader: inout ByteReader) throws(GATTCodecError) -> InfiniTimeWeatherIcon {
        let raw = try reader.readUInt8()
        guard let icon = InfiniTimeWeatherIcon(rawValue: raw) else {
            throw .reservedValue(field: "weather icon", value: Int(raw))
        }
        return icon
    }
}
