import Synchronization
import Testing
import Wear2MQTTTesting
import Wearables
import SimulatedWearables

/// A link that records what a device pushes, standing in for the simulator.
final class RecordingLink: PeripheralLink {
    let mtu = 247
    let pushed = Mutex<[(uuid: BluetoothUUID, value: [UInt8], indication: Bool)]>([])

    func isSubscribed(_ characteristic: BluetoothUUID) async -> Bool { true }
    func notify(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool {
        pushed.withLock { $0.append((characteristic, value, false)) }
        return true
    }
    func indicate(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool {
        pushed.withLock { $0.append((characteristic, value, true)) }
        return true
    }
    func disconnect() async {}

    func values(of uuid: BluetoothUUID) -> [[UInt8]] { pushed.withLock { $0.filter { $0.uuid == uuid }.map(\.value) } }
}

/// Runs `peripheral`, made on `clock`, for `span` of the clock's time and returns the link with what it pushed.
/// A tenth of a second at a time, each step's ticks run to the schedule's next sleep before the next step.
func collect(_ peripheral: any SimulatedPeripheral, over span: Duration, clock: ManualClock) async -> RecordingLink {
    let link = RecordingLink()
    let task = Task { await peripheral.run(on: link) }
    #expect(await clock.sleepers(atLeast: 1), "the peripheral armed its schedule")
    var left = span
    while left > .zero {
        let step = min(left, .milliseconds(100))
        await clock.advance(by: step)
        #expect(await clock.sleepers(atLeast: 1), "the step's ticks ran")
        left -= step
    }
    task.cancel()
    await task.value
    return link
}

struct SimulatedDeviceTests {
    @Test func aStrapGivenTheSameSeedSendsTheSameMeasurementsAndTheyDecode() async throws {
        let clock = ManualClock()
        let configuration = SimulatedDeviceConfiguration(seed: 99, options: ["rate_hz": .int(200), "bpm": .int(60)],
                                                         time: clock.timeSource)
        let first = await collect(try SimulatedHeartRateStrap(configuration), over: .milliseconds(1500), clock: clock)
            .values(of: BluetoothUUID(0x2A37))
        let second = await collect(try SimulatedHeartRateStrap(configuration), over: .milliseconds(1500), clock: clock)
            .values(of: BluetoothUUID(0x2A37))
        #expect(first.count == 300, "1.5 s at 200 Hz")
        #expect(first == second)
        let measurements = try first.map { try HeartRateMeasurement.decode($0) }
        #expect(measurements.allSatisfy { (35...95).contains($0.bpm) && $0.contact == true })
        let intervals = measurements.flatMap(\.rrIntervals)
        #expect(!intervals.isEmpty, "1.5 s of a 60 bpm heart completes at least one beat")
        #expect(intervals.allSatisfy { (0.6...1.6).contains($0) })
        #expect(measurements.first?.energyExpendedKJ != nil, "energy goes into every tenth measurement")
    }

    @Test func theControlPointResetsEnergyAndRefusesUnknownCommandsWithError0x80() async throws {
        let strap = try SimulatedHeartRateStrap(SimulatedDeviceConfiguration())
        try await strap.write(BluetoothUUID(0x2A39), value: [0x01], kind: .request)
        await #expect(throws: ATTError.application(0x80)) {
            try await strap.write(BluetoothUUID(0x2A39), value: [0x07], kind: .request)
        }
        #expect(try BodySensorLocation.decode(await strap.read(BluetoothUUID(0x2A38))) == .chest)
    }

    @Test func aThermometerIndicatesMeasurementsNearItsConfiguredTemperature() async throws {
        let clock = ManualClock()
        let thermometer = try SimulatedThermometer(SimulatedDeviceConfiguration(seed: 3, options: [
            "rate_hz": .int(100), "temperature_c": .double(38.5), "temperature_type": .string("ear"),
        ], time: clock.timeSource))
        let link = await collect(thermometer, over: .milliseconds(50), clock: clock)
        let sent = link.pushed.withLock { $0 }
        #expect(sent.count == 5, "50 ms at 100 Hz")
        #expect(sent.allSatisfy { $0.indication })
        let measurement = try TemperatureMeasurement.decode(try #require(sent.first).value)
        #expect(measurement.temperatureType == .ear)
        #expect(abs((measurement.celsius ?? 0) - 38.5) < 1.6)
    }

    @Test func anOximeterNotifiesContinuouslyAndIndicatesASpotCheckOnRequest() async throws {
        let clock = ManualClock()
        let oximeter = try SimulatedPulseOximeter(SimulatedDeviceConfiguration(options: ["rate_hz": .int(100), "spo2": .int(95)],
                                                                               time: clock.timeSource))
        let values = await collect(oximeter, over: .milliseconds(30), clock: clock).values(of: BluetoothUUID(0x2A5F))
        #expect(values.count == 3, "30 ms at 100 Hz")
        let reading = try PLXContinuousMeasurement.decode(try #require(values.first))
        #expect(abs((reading.normal.spo2.value.doubleValue ?? 0) - 95) <= 3)
        let link = RecordingLink()
        #expect(await oximeter.handle(.spotCheck, link: link))
        #expect(link.values(of: BluetoothUUID(0x2A5E)).count == 1)
        #expect(await oximeter.handle(.findMyPhone, link: link) == false)
    }

    @Test func aKeyFinderKeepsTheAlertLevelAndNotifiesItsButton() async throws {
        let tag = try SimulatedKeyFinder(SimulatedDeviceConfiguration())
        try await tag.write(BluetoothUUID(0x2A06), value: AlertLevel.high.encode(), kind: .command)
        #expect(await tag.alertLevel == .high)
        let link = RecordingLink()
        #expect(await tag.handle(.buttonPress, link: link))
        #expect(await tag.handle(.findMyPhone, link: link))
        #expect(link.values(of: BluetoothUUID(0xFFE1)) == [[0x01], [0x02]])
    }

    @Test func unknownAndOutOfRangeOptionsNameTheKey() {
        #expect(throws: SimulatedDeviceConfigurationError.invalidOption(key: "rate_hz", reason: "must be between 0.001 and 200.0, got 500")) {
            _ = try SimulatedHeartRateStrap(SimulatedDeviceConfiguration(options: ["rate_hz": .int(500)]))
        }
        #expect(throws: SimulatedDeviceConfigurationError.self) {
            _ = try SimulatedKeyFinder(SimulatedDeviceConfiguration(options: ["volume": .int(3)]))
        }
    }
}
