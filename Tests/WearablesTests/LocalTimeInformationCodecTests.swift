import Foundation
import Testing
import Wearables

@Suite("Local Time Information")
struct LocalTimeInformationCodecTests {
    @Test("time zone sint8 and DST offset uint8 in quarter hours: UTC+1 with summer time is 04 04")
    func codes() throws {
        let paris = try LocalTimeInformation(timeZone: 4, dstOffset: .daylightTime)
        try expectCodes(paris, as: [0x04, 0x04])
        // UTC−5:00, standard time: −20 quarters = 0xEC.
        try expectCodes(try LocalTimeInformation(timeZone: -20, dstOffset: .standardTime), as: [0xEC, 0x00])
        let unknown = try LocalTimeInformation(timeZone: LocalTimeInformation.unknownTimeZone, dstOffset: .unknown)
        try expectCodes(unknown, as: [0x80, 0xFF])
    }

    @Test("from a zone's offsets in seconds: India +5:30, Nepal +5:45, Paris in summer")
    func fromSeconds() throws {
        #expect(try LocalTimeInformation(secondsFromUTC: 19_800, daylightSavingSeconds: 0).encode() == [22, 0])
        #expect(try LocalTimeInformation(secondsFromUTC: 20_700, daylightSavingSeconds: 0).encode() == [23, 0])
        #expect(try LocalTimeInformation(secondsFromUTC: 7_200, daylightSavingSeconds: 3_600).encode() == [4, 4])
        let zone = try #require(TimeZone(identifier: "Europe/Paris"))
        let july = Date(timeIntervalSince1970: 1_720_000_000)
        let summer = try LocalTimeInformation(secondsFromUTC: zone.secondsFromGMT(for: july),
                                              daylightSavingSeconds: Int(zone.daylightSavingTimeOffset(for: july)))
        #expect(summer.encode() == [4, 4])
        #expect(throws: GATTCodecError.outOfRange(field: "time zone", value: 100)) {
            try LocalTimeInformation(secondsFromUTC: 100, daylightSavingSeconds: 0)
        }
        #expect(throws: GATTCodecError.outOfRange(field: "dst offset", value: 900)) {
            try LocalTimeInformation(secondsFromUTC: 3_600, daylightSavingSeconds: 900)
        }
    }

    @Test("reserved DST offsets and zones beyond ±14 h are refused; one byte is truncated")
    func refused() {
        #expect(throws: GATTCodecError.reservedValue(field: "dst offset", value: 1)) {
            try LocalTimeInformation.decode([0x00, 0x01])
        }
        #expect(throws: GATTCodecError.outOfRange(field: "time zone", value: 57)) { try LocalTimeInformation.decode([57, 0]) }
        #expect(throws: GATTCodecError.outOfRange(field: "time zone", value: -49)) {
            try LocalTimeInformation.decode([0xCF, 0])
        }
        expectEveryPrefixTruncated(LocalTimeInformation.self, [0x04, 0x04])
    }
}
