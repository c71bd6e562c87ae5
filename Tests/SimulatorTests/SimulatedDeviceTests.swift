import Synchronization
import Testing
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

/// Runs `peripheral` until it pushed `count` values on `uuid`.
func collect(_ peripheral: any SimulatedPeripheral, _ uuid: BluetoothUUID, count: Int) async -> [[UInt8]] {
    let link = RecordingLink()
    let task = Task { await peripheral.run(on: link) }
    // Generous: the whole suite runs in parallel on two cores.
    let deadline = ContinuousClock.now + .seconds(60)
    while link.values(of: uuid).count < count && ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(5))
    }
    task.cancel()
    return Array(link.values(of: uuid).prefix(count))
}

struct SimulatedDeviceTests {
    @Test func aStrapGivenTheSameSeedSendsTheSameMeasurementsAndTheyDecode() async throws {
        let configuration = SimulatedDeviceConfiguration(seed: 99, options: ["rate_hz": .int(200), "bpm": .int(60)])
        let first = await collect(try SimulatedHeartRateStrap(configuration), BluetoothUUID(0x2A37), count: 300)
        let second = await collect(try SimulatedHeartRateStrap(configuration), BluetoothUUID(0x2A37), count: 300)
        #expect(first.count == 300)
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
        let thermometer = try SimulatedThermometer(SimulatedDeviceConfiguration(seed: 3, options: [
            "rate_hz": .int(100), "temperature_c": .double(38.5), "temperature_type": .string("ear"),
        ]))
        let link = RecordingLink()
        let task = Task { await thermometer.run(on: link) }
        while link.values(of: BluetoothUUID(0x2A1C)).count < 5 { try await Task.sleep(for: .milliseconds(5)) }
        task.cancel()
        let sent = link.pushed.withLock { $0 }
        #expect(sent.allSatisfy { $0.indication })
        let measurement = try TemperatureMeasurement.decode(try #require(sent.first).value)
        #expect(measurement.temperatureType == .ear)
        #expect(abs((measurement.celsius ?? 0) - 38.5) < 1.6)
    }

    @Test func anOximeterNotifiesContinuouslyAndIndicatesASpotCheckOnRequest() async throws {
        let oximeter = try SimulatedPulseOximeter(SimulatedDeviceConfiguration(options: ["rate_hz": .int(100), "spo2": .int(95)]))
        let values = await collect(oximeter, BluetoothUUID(0x2A5F), count: 3)
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
