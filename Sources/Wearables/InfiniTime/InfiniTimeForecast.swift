/// The Simple Weather Service's forecast message (type 1, version 0), written to `00050001-…`: 36 bytes,
/// little-endian.
///
/// | bytes | field |
/// | --- | --- |
/// | 0 | message type 1 |
/// | 1 | version 0 |
/// | 2–9 | timestamp, `uint64`, seconds since 1970 in local time |
/// | 10 | number of days, at most 5 |
/// | 11 + 5·d … | day d: minimum, maximum (`InfiniTimeTemperature`), icon (`InfiniTimeWeatherIcon`); unused days 0 |
///
/// Sources: `InfiniTimeOrg/InfiniTime` `doc/SimpleWeatherService.md` ("Forecast") and
/// `src/components/ble/SimpleWeatherService.cpp` (`CreateForecast`: reads as many days as byte 10 says, at most
/// `MaxNbForecastDays` = 5; `OnCommand` takes only version 0). Day 0 is today.
public struct InfiniTimeForecast: Hashable, Sendable {
    public static let messageType: UInt8 = 1
    public static let maximumDayCount = 5
    public static let byteCount = 11 + 5 * maximumDayCount

    public struct Day: Hashable, Sendable {
        public let minimumTemperature: InfiniTimeTemperature
        public let maximumTemperature: InfiniTimeTemperature
        public let icon: InfiniTimeWeatherIcon

        public init(minimumTemperature: InfiniTimeTemperature, maximumTemperature: InfiniTimeTemperature,
                    icon: InfiniTimeWeatherIcon) {
            self.minimumTemperature = minimumTemperature
            self.maximumTemperature = maximumTemperature
            self.icon = icon
        }
    }

    public let timestamp: UInt64
    /// 0…5 days, today first.
    public let days: [Day]

    /// Throws `outOfRange` of the day count above 5 (the firmware would drop the rest silently).
    public init(timestamp: UInt64, days: [Day]) throws(GATTCodecError) {
        guard days.count <= Self.maximumDayCount else { throw .outOfRange(field: "forecast days", value: days.count) }
        self.timestamp = timestamp
        self.days = days
    }

    /// A version other than 0 is `reservedValue`, more than 5 days `outOfRange`; the message may end after its
    /// last used day (the firmware reads no further) but not run past 36 bytes.
    static func read(from reader: inout ByteReader) throws(GATTCodecError) -> InfiniTimeForecast {
        let version = try reader.readUInt8()
        guard version == 0 else { throw .reservedValue(field: "forecast version", value: Int(version)) }
        let timestamp = try reader.read(UInt64.self)
        let count = Int(try reader.readUInt8())
        guard count <= maximumDayCount else { throw .outOfRange(field: "forecast days", value: count) }
        var days: [Day] = []
        for _ in 0..<count {
            let minimum = try InfiniTimeTemperature.read(from: &reader)
            let maximum = try InfiniTimeTemperature.read(from: &reader)
            days.append(Day(minimumTemperature: minimum, maximumTemperature: maximum,
                            icon: try InfiniTimeWeatherIcon.read(from: &reader)))
        }
        let consumed = reader.offset
        guard consumed + reader.remainingCount <= byteCount else {
            throw .truncated(expected: byteCount, actual: consumed + reader.remainingCount)
        }
        _ = try reader.readBytes(reader.remainingCount)
        return try InfiniTimeForecast(timestamp: timestamp, days: days)
    }

    func write(to writer: inout ByteWriter) {
        writer.write(Self.messageType)
        writer.write(UInt8(0))
        writer.write(timestamp)
        writer.write(UInt8(days.count))
        for day in days {
            day.minimumTemperature.write(to: &writer)
            day.maximumTemperature.write(to: &writer)
            writer.write(day.icon.rawValue)
        }
        writer.write(contentsOf: repeatElement(UInt8(0), count: 5 * (Self.maximumDayCount - days.count)))
    }
}
