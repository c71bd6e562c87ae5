import Foundation
import Testing
import Wearables

@Suite("Current Time")
struct CurrentTimeCodecTests {
    /// 2024-03-15 10:30:45 and 128/256 s, a Friday, after a manual update.
    let friday: [UInt8] = [0xE8, 0x07, 0x03, 0x0F, 0x0A, 0x1E, 0x2D, 0x05, 0x80, 0x01]

    @Test("decodes year u16, month, day, h, m, s, weekday, fractions256, adjust reason")
    func decodes() throws {
        let time = try CurrentTime.decode(friday)
        #expect(time.dateTime == (try GATTDateTime(year: 2024, month: 3, day: 15, hours: 10, minutes: 30, seconds: 45)))
        #expect(time.dayOfWeek == .friday)
        #expect(time.fractions256 == 128)
        #expect(time.adjustReason == .manualTimeUpdate)
    }

    @Test("encodes from calendar fields")
    func encodesFields() throws {
        let time = try CurrentTime(
            year: 2024, month: 3, day: 15, hours: 10, minutes: 30, seconds: 45, dayOfWeek: 5, fractions256: 128,
            adjustReason: .manualTimeUpdate
        )
        try expectCodes(time, as: friday)
    }

    @Test("encodes from a Date in a given time zone, weekdays numbered from Monday")
    func encodesDate() throws {
        // 1710498645.5 is 2024-03-15T10:30:45.5Z.
        let date = Date(timeIntervalSince1970: 1_710_498_645.5)
        let utc = try #require(TimeZone(identifier: "UTC"))
        let expected: [UInt8] = [0xE8, 0x07, 0x03, 0x0F, 0x0A, 0x1E, 0x2D, 0x05, 0x80, 0x00]
        #expect(try CurrentTime(date: date, timeZone: utc).encode() == expected)
        let plusOne = try #require(TimeZone(secondsFromGMT: 3600))
        #expect(try CurrentTime(date: date, timeZone: plusOne).dateTime.hours == 11)
        // Two days later is a Sunday: 7, not Calendar's 1.
        let sunday = try CurrentTime(date: date.addingTimeInterval(2 * 86_400), timeZone: utc)
        #expect(sunday.dayOfWeek == .sunday)
        #expect(sunday.encode()[7] == 0x07)
    }

    @Test("zeros mean 'not known' and are accepted")
    func unknown() throws {
        let time = try CurrentTime.decode([0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
        #expect(time.dateTime.year == 0)
        #expect(time.dayOfWeek == .unknown)
    }

    @Test("out-of-range fields are refused, naming the field")
    func invalid() {
        #expect(throws: GATTCodecError.outOfRange(field: "month", value: 13)) {
            try CurrentTime.decode([0xE8, 0x07, 0x0D, 0x0F, 0x0A, 0x1E, 0x2D, 0x05, 0x80, 0x01])
        }
        #expect(throws: GATTCodecError.outOfRange(field: "day of week", value: 8)) {
            try CurrentTime.decode([0xE8, 0x07, 0x03, 0x0F, 0x0A, 0x1E, 0x2D, 0x08, 0x80, 0x01])
        }
        #expect(throws: GATTCodecError.outOfRange(field: "hours", value: 24)) {
            try CurrentTime.decode([0xE8, 0x07, 0x03, 0x0F, 0x18, 0x1E, 0x2D, 0x05, 0x80, 0x01])
        }
        #expect(throws: GATTCodecError.outOfRange(field: "year", value: 1000)) {
            try CurrentTime(year: 1000, month: 1, day: 1, hours: 0, minutes: 0, seconds: 0, dayOfWeek: 1)
        }
        #expect(throws: GATTCodecError.outOfRange(field: "seconds", value: 60)) {
            try CurrentTime(year: 2024, month: 1, day: 1, hours: 0, minutes: 0, seconds: 60, dayOfWeek: 1)
        }
        #expect(throws: GATTCodecError.outOfRange(field: "fractions256", value: 256)) {
            try CurrentTime(
                year: 2024, month: 1, day: 1, hours: 0, minutes: 0, seconds: 0, dayOfWeek: 1, fractions256: 256)
        }
    }

    @Test("every truncation of the 10 bytes is refused")
    func truncation() {
        expectEveryPrefixTruncated(CurrentTime.self, friday)
    }
}
