import BlueZ
import SimulatedWearables
import Testing
import Wear2MQTTTesting
@testable import Wearables

/// One characteristic that cannot notify never silences the others: each driver keeps its other streams flowing,
/// reports the failure (a `subscription_failed` event and a log line) and subscribes again while connected. In the
/// field: a strap whose Battery Level wants a bond before it notifies (StartNotify answered NotPermitted) published
/// its battery and no heart rate at all.
@Suite("Notifications: one failing characteristic leaves the others flowing", .timeLimit(.minutes(1)))
struct NotificationResilienceTests {
    static let batteryLevel = GATTUUID.string(for: GATTUUID.Characteristic.batteryLevel)
    static let heartRate = GATTUUID.string(for: GATTUUID.Characteristic.heartRateMeasurement)
    /// Five measurements a second, so the samples a test waits for come within a second or two.
    static let strapOptions: [String: SimulationOptionValue] = ["rate_hz": .int(5)]

    @Test("standard: a strap whose Battery Level refuses notifications still streams heart rate, and says so once")
    func standardStrapWithRefusedBattery() async throws {
        let strap = DriverHarness(StandardGATTDriver.self, peripheral: try simulated("heart_rate_strap", options: Self.strapOptions))
        strap.central.refuseNotifications(Self.batteryLevel)
        try await strap.connect()
        #expect(await strap.samplesFlow(.heartRate))
        #expect(strap.reportedFailure(of: Self.batteryLevel))
        #expect(strap.recorder.events(named: "subscription_failed").count == 1, "reported once, not on every retry")
        #expect(strap.recorder.state["battery"] != nil, "the level read at connection time is published")
        #expect(!strap.sessionEnded)
        await strap.disconnect()
        #expect(strap.sessionEnded)
    }

    @Test("standard: the refused Battery Level is subscribed again and flows once the device lets it")
    func standardRetriesTheRefusedCharacteristic() async throws {
        let strap = DriverHarness(StandardGATTDriver.self, peripheral: try simulated("heart_rate_strap", options: Self.strapOptions))
        strap.central.refuseNotifications(Self.batteryLevel)
        try await strap.connect()
        #expect(await strap.until(timeout: .seconds(20)) { strap.reportedFailure(of: Self.batteryLevel) })
        strap.central.refuseNotifications(Self.batteryLevel, with: nil)
        #expect(await strap.until(timeout: .seconds(10)) {
            await strap.central.isSubscribed(Self.batteryLevel, on: strap.address)
        })
        await strap.disconnect()
    }

    @Test("standard: heart-rate notifications that stop while the link stays up are reported and resume")
    func standardResubscribesAnEndedStream() async throws {
        let strap = DriverHarness(StandardGATTDriver.self, peripheral: try simulated("heart_rate_strap", options: Self.strapOptions))
        try await strap.connect()
        #expect(await strap.samplesFlow(.heartRate, count: 2))
        strap.central.endNotifications(Self.heartRate, on: strap.address)
        #expect(await strap.until(timeout: .seconds(20)) { strap.reportedFailure(of: Self.heartRate) })
        #expect(await strap.samplesFlow(.heartRate, count: 2))
        #expect(!strap.sessionEnded)
        await strap.disconnect()
    }

    @Test("bose: refused gesture notifications leave sensor data and configuration confirmations working")
    func boseWithRefusedGestures() async throws {
        let frames = DriverHarness(BoseWearableDriver.self, peripheral: try simulated("bose_frames"))
        frames.central.refuseNotifications(BoseUUID.gestureData)
        try await frames.connect()
        #expect(await frames.until(timeout: .seconds(20)) { frames.recorder.state["capabilities"] != nil })
        let applied = try await frames.executeWhenReady(.configure(["sensors": .object(["accelerometer": .object(["period_ms": 20])])]))
        #expect(applied.object?["sensors"]?.object?["accelerometer"] == .object(["period_ms": 20]))
        #expect(await frames.samplesFlow(.accelerometer))
        #expect(frames.reportedFailure(of: BoseUUID.gestureData))
        await frames.disconnect()
    }

    @Test("empatica: a refused temperature stream leaves BVP, acceleration and EDA flowing")
    func empaticaWithRefusedTemperature() async throws {
        let band = DriverHarness(EmpaticaE4Driver.self, peripheral: try simulated("empatica_e4"))
        band.central.refuseNotifications(E4UUID.Characteristic.temperature)
        try await band.connect()
        #expect(await band.samplesFlow(.bvp, count: 64))
        #expect(await band.samplesFlow(.eda, count: 2))
        #expect(band.reportedFailure(of: E4UUID.Characteristic.temperature))
        #expect(band.recorder.samples(.skinTemperature).isEmpty)
        await band.disconnect()
    }

    @Test("gofit: a refused Battery Level leaves the vendor channel working (the band asks to be paired)")
    func gofitWithRefusedBattery() async throws {
        let band = DriverHarness(GoFITDriver.self, peripheral: try simulated("gofit_care_xc"))
        band.central.refuseNotifications(Self.batteryLevel)
        try await band.connect()
        #expect(await band.until(timeout: .seconds(10)) { !band.recorder.events(named: "pairing_required").isEmpty })
        #expect(band.reportedFailure(of: Self.batteryLevel))
        await band.disconnect()
    }

    @Test("actigraph: a refused IMU stream leaves the raw accelerometer stream and its configuration working")
    func actigraphWithRefusedIMU() async throws {
        let link = DriverHarness(ActiGraphDriver.self, peripheral: try simulated("actigraph_link"))
        link.central.refuseNotifications(ActiGraphUUID.imuStream)
        try await link.connect()
        #expect(await link.until(timeout: .seconds(10)) { link.recorder.state["serial"] != nil })
        _ = try await link.execute(.configure(["raw": .object(["stream": true])]))
        #expect(await link.samplesFlow(.accelerometer, count: 30))
        #expect(link.reportedFailure(of: ActiGraphUUID.imuStream))
        await link.disconnect()
    }
}
