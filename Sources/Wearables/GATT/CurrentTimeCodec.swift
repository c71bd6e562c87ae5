import FoundationEssentials

/// The Current Time characteristic (0x2A2B; Current Time Service 1.1, "Current Time"): Date Time (7 bytes),
/// day of week, 1/256 fractions of a second and the reason for the last adjustment — 10 bytes, LE.
///
/// The gateway writes it to set a wearable's clock (`time_sync`) and reads it to check one. Pure: the `Date`
/// initializer takes its time zone as an argument and never reads the system clock or zone.
public struct CurrentTime: GATTCharacteristicValue, Hashable {
    public static let characteristicUUID = GATTUUID.Characteristic.currentTime

    /// 1 Monday … 7 Sunday, as ISO 8601 numbers them; 0 when not known.
    public enum DayOfWeek: UInt8, Sendable, Hashable, CaseIterable {
        case unknown = 0
        case monday, tuesday, wednesday, thursday, friday, saturday, sunday
    }

    /// Why the clock was last changed. Bits 4–7 are reserved; they are kept so a value re-encodes unchanged.
    public struct AdjustReason: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let manualTimeUpdate = AdjustReason(rawValue: 0x01)
        public static let externalReferenceTimeUpdate = AdjustReason(rawValue: 0x02)
        public static let changeOfTimeZone = AdjustReason(rawValue: 0x04)
        public static let changeOfDaylightSavingTime = AdjustReason(rawValue: 0x08)
    }

    public let dateTime: GATTDateTime
    public let dayOfWeek: DayOfWeek
    /// Fractions of a second in 1/256 s.
    public let fractions256: UInt8
    public let adjustReason: AdjustReason

    public init(
        dateTime: GATTDateTime, dayOfWeek: DayOfWeek, fractions256: UInt8 = 0, adjustReason: AdjustReason = []
    ) {
        self.dateTime = dateTime
        self.dayOfWeek = dayOfWeek
        self.fractions256 = fractions256
        self.adjustReason = adjustReason
    }

    /// From calendar fields; `dayOfWeek` is 1 Monday … 7 Sunday or 0. Throws `outOfRange` naming the first
    /// field outside its range.
    public init(
        year: Int, month: Int, day: Int, hours: Int, minutes: Int, seconds: Int,
        dayOfWeek: Int, fractions256: Int = 0, adjustReason: AdjustReason = []
    ) throws(GATTCodecError) {
        let dateTime = try GATTDateTime(
            year: year, month: month, day: day, hours: hours, minutes: minutes, seconds: seconds)
        guard let weekday = UInt8(exactly: dayOfWeek).flatMap(DayOfWeek.init(rawValue:)) else {
            throw .outOfRange(field: "day of week", value: dayOfWeek)
        }
        guard let fraction = UInt8(exactly: fractions256) else {
            throw .outOfRange(field: "fractions256", value: fractions256)
        }
        self.init(dateTime: dateTime, dayOfWeek: weekday, fractions256: fraction, adjustReason: adjustReason)
    }

    /// The wall-clock time of `date` in `timeZone`, in the Gregorian calendar, fractions rounded down.
    /// Throws `outOfRange` for a year outside 1582…9999.
    public init(date: Date, timeZone: TimeZone, adjustReason: AdjustReason = []) throws(GATTCodecError) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        let wholeSeconds = date.timeIntervalSinceReferenceDate.rounded(.down)
        let fraction = Int(((date.timeIntervalSinceReferenceDate - wholeSeconds) * 256).rounded(.down))
        // Calendar numbers weekdays 1 Sunday … 7 Saturday.
        let isoWeekday = ((parts.weekday ?? 1) + 5) % 7 + 1
        try self.init(
            year: parts.year ?? 0, month: parts.month ?? 0, day: parts.day ?? 0,
            hours: parts.hour ?? 0, minutes: parts.minute ?? 0, seconds: parts.second ?? 0,
            dayOfWeek: isoWeekday, fractions256: min(fraction, 255), adjustReason: adjustReason
        )
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> CurrentTime {
        var reader = ByteReader(bytes)
        let dateTime = try GATTDateTime.read(from: &reader)
        let rawWeekday = try reader.readUInt8()
        guard let dayOfWeek = DayOfWeek(rawValue: rawWeekday) else {
            throw .outOfRange(field: "day of week", value: Int(rawWeekday))
        }
        let fractions256 = try reader.readUInt8()
        let adjustReason = AdjustReason(rawValue: try reader.readUInt8())
        return CurrentTime(
            dateTime: dateTime, dayOfWeek: dayOfWeek, fractions256: fractions256, adjustReason: adjustReason)
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        dateTime.write(to: &writer)
        writer.write(dayOfWeek.rawValue)
        writer.write(fractions256)
        writer.write(adjustReason.rawValue)
        return writer.bytes
    }
}
