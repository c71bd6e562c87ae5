import Testing

@testable import Wearables

@Suite("InfiniTime UUIDs")
struct InfiniTimeUUIDTests {
    @Test("the custom services and characteristics are doc/ble.md's and the service docs' strings")
    func documented() {
        #expect(InfiniTimeUUID.Service.music == "00000000-78fc-48fe-8e23-433b3a1942d0")
        #expect(InfiniTimeUUID.Service.navigation == "00010000-78fc-48fe-8e23-433b3a1942d0")
        #expect(InfiniTimeUUID.Service.motion == "00030000-78fc-48fe-8e23-433b3a1942d0")
        #expect(InfiniTimeUUID.Service.simpleWeather == "00050000-78fc-48fe-8e23-433b3a1942d0")
        #expect(InfiniTimeUUID.Characteristic.musicEvent == "00000001-78fc-48fe-8e23-433b3a1942d0")
        #expect(InfiniTimeUUID.Characteristic.musicAlbum == "00000005-78fc-48fe-8e23-433b3a1942d0")
        #expect(InfiniTimeUUID.Characteristic.notificationEvent == "00020001-78fc-48fe-8e23-433b3a1942d0")
        #expect(InfiniTimeUUID.Characteristic.stepCount == "00030001-78fc-48fe-8e23-433b3a1942d0")
        #expect(InfiniTimeUUID.Characteristic.motionValues == "00030002-78fc-48fe-8e23-433b3a1942d0")
        #expect(InfiniTimeUUID.Characteristic.navigationProgress == "00010004-78fc-48fe-8e23-433b3a1942d0")
        #expect(InfiniTimeUUID.Characteristic.weatherData == "00050001-78fc-48fe-8e23-433b3a1942d0")
        #expect(InfiniTimeUUID.Standard.newAlert == "00002a46-0000-1000-8000-00805f9b34fb")
    }

    @Test("the firmware's little-endian ble_uuid128_t bytes read back to the same strings (MusicService.cpp CharUuid)")
    func firmwareBytes() {
        // CharUuid(0x0c, 0x00) of MusicService.cpp: the shuffle characteristic.
        let shuffle: [UInt8] = [0xd0, 0x42, 0x19, 0x3a, 0x3b, 0x43, 0x23, 0x8e, 0xfe, 0x48, 0xfc, 0x78, 0x0c, 0x00, 0x00, 0x00]
        let hex = shuffle.reversed().map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
        let string = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4),
                      hex.dropFirst(20)].joined(separator: "-")
        #expect(string == InfiniTimeUUID.Characteristic.musicShuffle)
    }

    @Test("every characteristic is distinct and lower case, as BlueZ reports them")
    func distinct() {
        typealias C = InfiniTimeUUID.Characteristic
        let all = [
            C.musicEvent, C.musicStatus, C.musicArtist, C.musicTrack, C.musicAlbum, C.musicPosition, C.musicTotalLength,
            C.musicTrackNumber, C.musicTrackTotal, C.musicPlaybackSpeed, C.musicRepeat, C.musicShuffle, C.navigationFlags,
            C.navigationNarrative, C.navigationManeuverDistance, C.navigationProgress, C.notificationEvent, C.stepCount,
            C.motionValues, C.weatherData,
        ]
        #expect(Set(all).count == all.count)
        #expect(all.allSatisfy { $0 == $0.lowercased() && $0.utf8.count == 36 })
    }
}
