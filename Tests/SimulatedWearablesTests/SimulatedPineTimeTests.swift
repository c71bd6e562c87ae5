import Testing

@testable import Wearables
@testable import SimulatedWearables

/// The simulated PineTime on its own: the GATT table each InfiniTime release has, what the watch keeps of each
/// write (read back through the same codecs the firmware's behaviour is restated in), the walking wearer's
/// signals, the buttons, and the option faults.
@Suite("Simulated PineTime with InfiniTime")
struct SimulatedPineTimeTests {
    typealias UUID = InfiniTimeUUID.Characteristic

    static func watch(_ options: [String: SimulationOptionValue] = [:], seed: UInt64 = 3) throws -> SimulatedPineTime {
        try SimulatedPineTime(SimulatedDeviceConfiguration(seed: seed, options: options))
    }

    static func has(_ watch: SimulatedPineTime, _ uuid: String) -> Bool {
        watch.services.characteristic(BluetoothUUID(constant: uuid)) != nil
    }

    @Test("the GATT table follows the release: Local Time from 1.12, Simple Weather from 1.14, motion from 1.7")
    func tableByRelease() throws {
        let localTime = GATTUUID.string(for: GATTUUID.Characteristic.localTimeInformation)
        let current = try Self.watch()
        #expect(Self.has(current, UUID.weatherData) && Self.has(current, UUID.stepCount) && Self.has(current, localTime))
        let advertised = current.advertisement.serviceUUIDs.map(\.string)
        #expect(InfiniTimeDriver.match(name: current.advertisement.localName, serviceUUIDs: advertised) == .likely,
                "its name and the DFU service before connecting")
        #expect(InfiniTimeDriver.match(name: "Polar H10", serviceUUIDs: advertised) == nil, "the DFU service alone is any nRF5")
        #expect(InfiniTimeDriver.match(name: nil, serviceUUIDs: current.services.map(\.uuid.string)) == .certain,
                "its own services once resolved")

        let old = try Self.watch(["firmware": .string("1.11.0")])
        #expect(!Self.has(old, localTime) && !Self.has(old, UUID.weatherData) && Self.has(old, UUID.stepCount))
        let older = try Self.watch(["firmware": .string("1.6.0")])
        #expect(!Self.has(older, UUID.stepCount) && Self.has(older, UUID.musicEvent))

        #expect(throws: SimulatedDeviceConfigurationError.self) { try Self.watch(["firmware": .string("0.15.0")]) }
        #expect(throws: SimulatedDeviceConfigurationError.self) { try Self.watch(["firmware": .string("latest")]) }
        #expect(throws: SimulatedDeviceConfigurationError.self) { try Self.watch(["fail_writes": .string("steps")]) }
        #expect(throws: SimulatedDeviceConfigurationError.self) { try Self.watch(["colour": .string("black")]) }
    }

    @Test("a New Alert is kept as the firmware reads it; a call opens the call screen, whose button notifies once")
    func alertsAndCallButtons() async throws {
        let watch = try Self.watch()
        let link = RecordingPeripheralLink()
        let alert = try InfiniTimeNewAlert(category: .call, title: nil, body: "Mary")
        try await watch.write(SimulatedPineTime.newAlertUUID, value: alert.encode(), kind: .request)
        var seen = await watch.inspect()
        #expect(seen["notification_body"] == "Mary")
        #expect(seen["notification_title"] == "Notification", "no title: the watch's own heading")
        #expect(seen["call_showing"] == "true")
        // Three bytes or fewer: ignored, as OnAlert does.
        try await watch.write(SimulatedPineTime.newAlertUUID, value: [0, 1, 0], kind: .request)
        #expect(await watch.inspect()["notifications"] == "1")

        let event = BluetoothUUID(constant: UUID.notificationEvent)
        #expect(await watch.handle(.callMute, link: link))
        #expect(await watch.handle(.callAnswer, link: link), "the screen closed: nothing to press, but not an unknown event")
        #expect(link.values(of: event) == [[0x02]])
        seen = await watch.inspect()
        #expect(seen["call_response"] == "mute")
        #expect(seen["call_showing"] == "false")

        #expect(await watch.handle(.musicPause, link: link))
        #expect(link.values(of: BluetoothUUID(constant: UUID.musicEvent)) == [[0x01]])
        #expect(await !watch.handle(.spotCheck, link: link))

        // Gadgetbridge's category 0xFA, which the SIG does not list: shown as a simple alert, as OnAlert shows it.
        try await watch.write(SimulatedPineTime.newAlertUUID, value: [0xFA, 1, 0] + Array("Chat".utf8) + [0] + Array("Hi there".utf8),
                              kind: .request)
        seen = await watch.inspect()
        #expect(seen["notifications"] == "2" && seen["notifications_unknown_category"] == "1")
        #expect(seen["notification_title"] == "Chat" && seen["notification_body"] == "Hi there" && seen["notification_category"] == "0xFA")
        #expect(seen["call_showing"] == "false", "only Call opens the call screen")
    }

    @Test("weather: version 1 is read from 1.16 only; 1.14 ignores it silently, as the firmware does")
    func weatherVersions() async throws {
        let sun = try InfiniTimeSunTimes(sunrise: 420, sunset: 1200)
        let degrees = try InfiniTimeTemperature(celsius: 18)
        let message = InfiniTimeWeatherMessage.current(InfiniTimeCurrentWeather(
            timestamp: 1_750_000_000, temperature: degrees, minimumTemperature: degrees, maximumTemperature: degrees,
            location: "Oslo", icon: .snow, sunTimes: sun)).encode()
        let uuid = BluetoothUUID(constant: UUID.weatherData)

        let current = try Self.watch()
        try await current.write(uuid, value: message, kind: .request)
        #expect(await current.inspect()["weather_sunrise"] == "420")

        let older = try Self.watch(["firmware": .string("1.14.0")])
        try await older.write(uuid, value: message, kind: .request)
        let seen = await older.inspect()
        #expect(seen["weather_location"] == nil)
        #expect(seen["weather_ignored"] == "1")
    }

    @Test("walking: steps rise at the cadence, motion is gravity plus the swing, in 1024 counts per g")
    func walking() async throws {
        var walk = PineTimeWalk(cadence: 120, steps: 100, seed: 9)
        var magnitudes: [Double] = []
        for _ in 0..<100 {
            _ = walk.advance(by: 0.1)
            let motion = walk.motion()
            let (x, y, z) = (Double(motion.x), Double(motion.y), Double(motion.z))
            magnitudes.append((x * x + y * y + z * z).squareRoot() / InfiniTimeMotionValues.countsPerG)
        }
        #expect(walk.steps == 120, "10 s at 120 steps a minute")
        #expect(magnitudes.allSatisfy { (0.6...1.5).contains($0) })
        #expect((magnitudes.max() ?? 0) - (magnitudes.min() ?? 0) > 0.1, "the arm swings")

        var standing = PineTimeWalk(cadence: 0, steps: 5, seed: 9)
        let counted = standing.advance(by: 60)
        #expect(!counted)
        #expect(standing.steps == 5)
    }

    @Test("fail_writes makes one part refuse with ATT 0x0E; the rest still takes writes")
    func failingWrites() async throws {
        let watch = try Self.watch(["fail_writes": .string("music")])
        await #expect(throws: ATTError.unlikelyError) {
            try await watch.write(BluetoothUUID(constant: UUID.musicTrack), value: Array("Help!".utf8), kind: .request)
        }
        try await watch.write(BluetoothUUID(constant: UUID.navigationFlags), value: Array("arrive".utf8), kind: .request)
        let seen = await watch.inspect()
        #expect(seen["music_track"] == nil)
        #expect(seen["navigation_icon"] == "arrive")
    }

    @Test("the application answers Legacy DFU version 0.8 and reports its Firmware Revision")
    func dfuVersion() async throws {
        let watch = try Self.watch(["firmware": .string("1.15.0")])
        #expect(try await watch.read(PineTimeApplicationDFU.version) == [0x08, 0x00])
        #expect(try await watch.read(BluetoothUUID(GATTUUID.Characteristic.firmwareRevision)) == Array("1.15.0".utf8))
    }
}
