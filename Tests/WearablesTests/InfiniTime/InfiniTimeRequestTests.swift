import Testing

@testable import Wearables

/// The pure halves of the `infinitime` driver's requests: fields in, the bytes each characteristic gets out, and the
/// release rules the Firmware Revision decides.
@Suite("InfiniTime requests")
struct InfiniTimeRequestTests {
    typealias UUID = InfiniTimeUUID.Characteristic

    @Test("a Firmware Revision reads as a release; what is not one is nil")
    func firmwareVersions() {
        #expect(InfiniTimeFirmwareVersion(revision: "1.16.0") == InfiniTimeFirmwareVersion(major: 1, minor: 16, patch: 0))
        #expect(InfiniTimeFirmwareVersion(revision: "v1.14") == .simpleWeather)
        #expect(InfiniTimeFirmwareVersion(revision: "1.16.0-rc1") == .weatherSunTimes)
        #expect(InfiniTimeFirmwareVersion(revision: "1.16.0+dfu.1") == .weatherSunTimes)
        for bad in ["", "1", "abc", "1.x.0", "1.2.3.4"] { #expect(InfiniTimeFirmwareVersion(revision: bad) == nil, "\(bad)") }
        #expect(InfiniTimeFirmwareVersion(revision: "1.9.0")! < .localTimeInformation)
        #expect(InfiniTimeFirmwareVersion(revision: "1.15.9")! < .weatherSunTimes)
    }

    @Test("notify: category by name (simple_alert by default), the New Alert bytes, and what the watch shows")
    func notify() throws {
        let doorbell = try InfiniTimeNotifyRequest(RequestReader(["title": "Doorbell", "body": "Front door"]))
        #expect(doorbell.alert.encode() == [0x00, 0x01, 0x00] + Array("Doorbell".utf8) + [0] + Array("Front door".utf8))
        #expect(!doorbell.truncated)
        let call = try InfiniTimeNotifyRequest(RequestReader(["body": "Mary", "category": "call"]))
        #expect(call.alert.encode() == [0x03, 0x01, 0x00] + Array("Mary".utf8), "a call's caller alone, as itd sends it")
        for category in InfiniTimeAlertCategory.requestable {
            #expect(InfiniTimeAlertCategory(contractName: category.contractName) == category)
        }
        #expect(InfiniTimeAlertCategory(contractName: "all") == nil)
        let long = try InfiniTimeNotifyRequest(RequestReader(["body": .text(String(repeating: "é", count: 80))]))
        #expect(long.truncated && long.alert.body.utf8.count <= 99 && long.alert.body.hasSuffix("..."))
    }

    @Test("music: one write per field, status first, numbers big-endian, texts cut at 40 bytes")
    func music() throws {
        let request = try InfiniTimeMusicRequest(RequestReader(["track": "Something", "playing": false, "position_s": 258, "speed": 0.5]))
        #expect(request.writes.map(\.characteristic) == [UUID.musicStatus, UUID.musicTrack, UUID.musicPosition, UUID.musicPlaybackSpeed])
        #expect(request.writes[0].bytes == [0])
        #expect(request.writes[2].bytes == [0, 0, 0x01, 0x02])
        #expect(request.writes[3].bytes == [0, 0, 0, 50])
        #expect(request.truncated.isEmpty)
        #expect(throws: CommandError.self) { try InfiniTimeMusicRequest(RequestReader(["track_number": 2_147_483_648])) }
    }

    @Test("weather: version 1 with sun times only when the release reads it; the watch's local timestamp in both")
    func weather() throws {
        let fields: [String: DeviceValue] = [
            "current": ["temperature": 21.5, "location": "Paris", "icon": "rain", "sunrise": "none", "sunset": "21:30"],
            "forecast": [["min": -3, "max": 4.25, "icon": "snow"]],
        ]
        // No sunrise but a sunset: the firmware would drop the pair, so it is refused.
        #expect(throws: CommandError.self) {
            try InfiniTimeWeatherRequest(RequestReader(fields), localTimestamp: 1, sunTimesSupported: true)
        }
        var good = fields
        good["current"] = ["temperature": 21.5, "location": "Paris", "icon": "rain", "sunrise": "07:12", "sunset": "21:30"]
        let current = try InfiniTimeWeatherRequest(RequestReader(good), localTimestamp: 1_750_007_200, sunTimesSupported: true)
        let bytes = current.messages.map { $0.encode() }
        #expect(bytes.map(\.count) == [InfiniTimeCurrentWeather.version1ByteCount, InfiniTimeForecast.byteCount])
        #expect(Array(bytes[0][0...1]) == [0, 1])
        #expect(Array(bytes[0][2...9]) == [0xA0, 0xFD, 0x4E, 0x68, 0, 0, 0, 0], "1,750,007,200 little-endian")
        guard case .forecast(let forecast) = current.messages[1] else { Issue.record("no forecast"); return }
        #expect(forecast.days.first?.maximumTemperature.hundredthsOfDegreeCelsius == 425)

        let older = try InfiniTimeWeatherRequest(RequestReader(good), localTimestamp: 1, sunTimesSupported: false)
        #expect(older.sunTimesDropped)
        #expect(older.messages.first?.encode().count == InfiniTimeCurrentWeather.version0ByteCount)
        #expect(older.answer["sun_times_sent"] == false)
    }

    @Test("navigation: the icon's name as written, progress as a byte")
    func navigation() throws {
        let request = try InfiniTimeNavigationRequest(RequestReader(["icon": "roundabout-left", "progress": 100]))
        #expect(request.writes.map(\.bytes) == [Array("roundabout-left".utf8), [100]])
        #expect(throws: CommandError.self) { try InfiniTimeNavigationRequest(RequestReader(["icon": "left"])) }
    }
}
