/// The Local Time Information characteristic (0x2A0F; Current Time Service 1.1): the time zone's offset from UTC
/// and the daylight saving offset, both in 15-minute units — 2 bytes.
///
/// Layout (GATT Specification Supplement, "Time Zone" 0x2A0E and "DST Offset" 0x2A0D): time zone `sint8`,
/// −48…+56 (UTC−12:00 … UTC+14:00), −128 unknown; DST offset `uint8`: 0 standard time, 2 half an hour, 4 one hour,
/// 8 two hours, 255 unknown. Other values are reserved.
///
/// InfiniTime reads and writes it since 1.12.0 (`InfiniTimeOrg/InfiniTime` `src/components/ble/CurrentTimeService.cpp`,
/// `OnLocalTimeAccessed`, commit 38092fcb "add CTS local time characteristic"): it stores both as `int8_t` and
/// takes UTC as local time minus (zone + DST) × 15 minutes (`DateTimeController.h`, `UTCDateTime`). So a DST
/// offset of 255 ("unknown") would read there as −1 and shift its UTC by a quarter of an hour: the driver sends
/// real values only. Current Time (`CurrentTime`) carries the local wall time.
public struct LocalTimeInformation: GATTCharacteristicValue, Hashable {
    public static let characteristicUUID = GATTUUID.Characteristic.localTimeInformation
    public static let unknownTimeZone: Int8 = -128

    public enum DSTOffset: UInt8, Sendable, Hashable, CaseIterable {
        case standardTime = 0
        case halfAnHourDaylightTime = 2
        case daylightTime = 4
        case doubleDaylightTime = 8
        case unknown = 255

        /// The offset in 15-minute units; nil when unknown.
        public var quarterHours: Int? { self == .unknown ? nil : Int(rawValue) }
    }

    /// Quarter hours east of UTC, −48…+56, or −128 unknown.
    public let timeZone: Int8
    public let dstOffset: DSTOffset

    /// Throws `outOfRange` of the time zone outside −48…+56 (other than −128).
    public init(timeZone: Int8, dstOffset: DSTOffset) throws(GATTCodecError) {
        guard timeZone == Self.unknownTimeZone || (-48...56).contains(timeZone) else {
            throw .outOfRange(field: "time zone", value: Int(timeZone))
        }
        self.timeZone = timeZone
        self.dstOffset = dstOffset
    }

    /// From a zone's total offset from UTC and the part of it that is daylight saving, in seconds (what
    /// `TimeZone.secondsFromGMT(for:)` and `daylightSavingTimeOffset(for:)` give). Throws `outOfRange` when either
    /// is not a whole number of quarter hours, or the standard offset or DST offset has no encoding.
    public init(secondsFromUTC: Int, daylightSavingSeconds: Int) throws(GATTCodecError) {
        let standard = secondsFromUTC - daylightSavingSeconds
        guard standard % 900 == 0, let quarters = Int8(exactly: standard / 900) else {
            throw .outOfRange(field: "time zone", value: standard)
        }
        guard daylightSavingSeconds % 900 == 0, let dst = UInt8(exactly: daylightSavingSeconds / 900),
              let offset = DSTOffset(rawValue: dst), offset != .unknown else {
            throw .outOfRange(field: "dst offset", value: daylightSavingSeconds)
        }
        try self.init(timeZone: quarters, dstOffset: offset)
    }

    /// A DST offset outside 0, 2, 4, 8, 255 is `reservedValue`; a zone outside −48…+56 (not −128) `outOfRange`.
    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> LocalTimeInformation {
        var reader = ByteReader(bytes)
        let zone = Int8(bitPattern: try reader.readUInt8())
        let rawDST = try reader.readUInt8()
        guard let dst = DSTOffset(rawValue: rawDST) else { throw .reservedValue(field: "dst offset", value: Int(rawDST)) }
        return try LocalTimeInformation(timeZone: zone, dstOffset: dst)
    }

    public func encode() -> [UInt8] { [UInt8(bitPattern: timeZone), dstOffset.rawValue] }
}
