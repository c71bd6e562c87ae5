/// A calendar date and wall-clock time as the SIG profiles send it (the "Date Time" characteristic 0x2A08,
/// GATT Specification Supplement): year u16, month, day, hours, minutes, seconds, 7 bytes, LE.
///
/// It carries no time zone: a thermometer's or oximeter's timestamp is in whatever zone the device's clock was
/// set to, so turning it into an instant is the driver's decision, not the codec's. Zero in year, month or day
/// means "not known", as the specification allows.
public struct GATTDateTime: Sendable, Equatable, Hashable {
    public static let byteCount = 7

    /// 1582…9999, or 0 when not known.
    public let year: Int
    /// 1…12, or 0 when not known.
    public let month: Int
    /// 1…31, or 0 when not known.
    public let day: Int
    public let hours: Int
    public let minutes: Int
    public let seconds: Int

    /// Throws `outOfRange` naming the first field outside the specification's range.
    public init(year: Int, month: Int, day: Int, hours: Int, minutes: Int, seconds: Int) throws(GATTCodecError) {
        guard year == 0 || (1582...9999).contains(year) else { throw .outOfRange(field: "year", value: year) }
        guard (0...12).contains(month) else { throw .outOfRange(field: "month", value: month) }
        guard (0...31).contains(day) else { throw .outOfRange(field: "day", value: day) }
        guard (0...23).contains(hours) else { throw .outOfRange(field: "hours", value: hours) }
        guard (0...59).contains(minutes) else { throw .outOfRange(field: "minutes", value: minutes) }
        guard (0...59).contains(seconds) else { throw .outOfRange(field: "seconds", value: seconds) }
        self.year = year
        self.month = month
        self.day = day
        self.hours = hours
        self.minutes = minutes
        self.seconds = seconds
    }

    static func read(from reader: inout ByteReader) throws(GATTCodecError) -> GATTDateTime {
        let year = Int(try reader.read(UInt16.self))
        let month = Int(try reader.readUInt8())
        let day = Int(try reader.readUInt8())
        let hours = Int(try reader.readUInt8())
        let minutes = Int(try reader.readUInt8())
        let seconds = Int(try reader.readUInt8())
        return try GATTDateTime(year: year, month: month, day: day, hours: hours, minutes: minutes, seconds: seconds)
    }

    func write(to writer: inout ByteWriter) {
        writer.write(UInt16(truncatingIfNeeded: year))
        for field in [month, day, hours, minutes, seconds] { writer.write(UInt8(truncatingIfNeeded: field)) }
    }
}
