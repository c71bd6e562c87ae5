import Testing

@testable import Wearables

@Suite("InfiniTime music")
struct InfiniTimeMusicTests {
    @Test("event codes from doc/ble.md (Music Control, Events) and MusicService.h's EVENT_MUSIC_*")
    func events() throws {
        let codes: [(UInt8, InfiniTimeMusicEvent)] = [
            (0xE0, .appOpened), (0x00, .play), (0x01, .pause), (0x03, .next), (0x04, .previous), (0x05, .volumeUp),
            (0x06, .volumeDown),
        ]
        for (byte, event) in codes {
            #expect(try InfiniTimeMusicEvent.decode([byte]) == event)
            #expect(event.encode() == [byte])
        }
        #expect(throws: GATTCodecError.unknownIdentifier(field: "music event", value: 2)) {
            try InfiniTimeMusicEvent.decode([0x02])
        }
        #expect(throws: GATTCodecError.truncated(expected: 1, actual: 0)) { try InfiniTimeMusicEvent.decode([]) }
    }

    @Test("status from doc/ble.md (Status): 0x01 playing, 0x00 paused; anything else refused")
    func status() throws {
        #expect(InfiniTimeMusicStatus.playing.encode() == [0x01])
        #expect(InfiniTimeMusicStatus.notPlaying.encode() == [0x00])
        #expect(try InfiniTimeMusicStatus.decode([0x01]) == .playing)
        #expect(throws: GATTCodecError.reservedValue(field: "music status", value: 2)) {
            try InfiniTimeMusicStatus.decode([0x02])
        }
    }

    @Test("numbers are 32-bit big-endian (MusicService.cpp OnCommand: s[0] << 24 …; Gadgetbridge intToBytes)")
    func numbers() throws {
        // A 3-minute track: 180 s.
        let length = try InfiniTimeMusicNumber(180, field: "length")
        #expect(length.encode() == [0x00, 0x00, 0x00, 0xB4])
        #expect(try InfiniTimeMusicNumber.decode([0x00, 0x00, 0x00, 0xB4]) == length)
        #expect(try InfiniTimeMusicNumber(70_000).encode() == [0x00, 0x01, 0x11, 0x70])
        // Playback speed in percent: the firmware divides by 100.0.
        #expect(InfiniTimeMusicNumber.normalSpeed.encode() == [0x00, 0x00, 0x00, 0x64])
        #expect(try InfiniTimeMusicNumber(playbackRate: 1.5).value == 150)
        #expect(throws: GATTCodecError.outOfRange(field: "position", value: -1)) {
            try InfiniTimeMusicNumber(-1, field: "position")
        }
        #expect(throws: GATTCodecError.outOfRange(field: "music number", value: 1 << 31)) {
            try InfiniTimeMusicNumber(1 << 31)
        }
        #expect(throws: GATTCodecError.outOfRange(field: "music number", value: -1)) {
            try InfiniTimeMusicNumber.decode([0xFF, 0xFF, 0xFF, 0xFF])
        }
        for length in 0..<4 {
            #expect(throws: GATTCodecError.truncated(expected: 4, actual: length)) {
                try InfiniTimeMusicNumber.decode(Array([0, 0, 0, 0xB4].prefix(length)))
            }
        }
    }

    @Test("repeat and shuffle are one byte, 1 on, 0 off (OnCommand: repeat = s[0])")
    func flags() throws {
        #expect(InfiniTimeMusicFlag(true).encode() == [0x01])
        #expect(InfiniTimeMusicFlag(false).encode() == [0x00])
        #expect(try InfiniTimeMusicFlag.decode([0x01]) == InfiniTimeMusicFlag(true))
        #expect(throws: GATTCodecError.reservedValue(field: "music flag", value: 5)) { try InfiniTimeMusicFlag.decode([5]) }
    }

    @Test("text of 40 bytes or fewer goes as it is")
    func shortText() throws {
        let artist = InfiniTimeMusicText("Daft Punk")
        #expect(artist.encode() == Array("Daft Punk".utf8))
        #expect(try InfiniTimeMusicText.decode(Array("Daft Punk".utf8)) == artist)
        let forty = String(repeating: "a", count: 40)
        #expect(InfiniTimeMusicText(forty).text == forty)
        #expect(!InfiniTimeMusicText.isTruncated(forty))
    }

    @Test("longer text is cut between characters within 37 bytes and ends with ..., as MaxStringSize 40 does it")
    func longText() throws {
        // 20 two-byte characters: 40 bytes fit exactly; 21 do not.
        #expect(InfiniTimeMusicText(String(repeating: "é", count: 20)).text == String(repeating: "é", count: 20))
        let cut = InfiniTimeMusicText(String(repeating: "é", count: 21))
        #expect(cut.text == String(repeating: "é", count: 18) + "...")
        #expect(cut.encode().count == 39)
        // A family emoji is one character of 25 bytes: it is kept whole or not at all.
        let family = "👨‍👩‍👧‍👦"
        #expect(InfiniTimeMusicText("ab" + family + family).text == "ab" + family + "...")
    }

    @Test("the firmware's reading of a long write: 37 bytes and ...; an empty write is empty text")
    func firmwareReading() throws {
        let long = Array(repeating: UInt8(ascii: "x"), count: 50)
        #expect(try InfiniTimeMusicText.decode(long).text == String(repeating: "x", count: 37) + "...")
        #expect(try InfiniTimeMusicText.decode([]).text == "")
        #expect(throws: GATTCodecError.invalidUTF8) { try InfiniTimeMusicText.decode([0xFF]) }
    }
}
