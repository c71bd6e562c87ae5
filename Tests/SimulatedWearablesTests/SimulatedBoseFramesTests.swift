import Synchronization
import Testing
import Wear2MQTTTesting

@testable import Wearables
@testable import SimulatedWearables

/// The simulated Bose Frames driven directly, with a link that records what the glasses push, on a manual clock:
/// a span of time holds an exact number of ticks. Every value is read back through the Bose codecs the driver uses.
@Suite("Simulated Bose Frames")
struct SimulatedBoseFramesTests {
    static let deviceInformation = BluetoothUUID(string: BoseUUID.deviceInformation)!
    static let sensorInformation = BluetoothUUID(string: BoseUUID.sensorInformation)!
    static let sensorConfiguration = BluetoothUUID(string: BoseUUID.sensorConfiguration)!
    static let sensorData = BluetoothUUID(string: BoseUUID.sensorData)!
    static let gestureInformation = BluetoothUUID(string: BoseUUID.gestureInformation)!
    static let gestureConfiguration = BluetoothUUID(string: BoseUUID.gestureConfiguration)!
    static let gestureData = BluetoothUUID(string: BoseUUID.gestureData)!

    /// The clock the glasses of a test run on.
    let clock = ManualClock()

    func frames(_ options: [String: SimulationOptionValue] = [:], seed: UInt64 = 7) throws -> SimulatedBoseFrames {
        try SimulatedBoseFrames(clocked(seed: seed, options: options, clock: clock))
    }

    /// Runs the glasses' behaviour on a new link, as the host does when a central connects: the sensor tick's timer,
    /// and the gesture script's when there is one.
    func connect(_ frames: SimulatedBoseFrames, mtu: Int = 247, timers: Int = 1) async throws -> (RecordingPeripheralLink, Task<Void, Never>) {
        let link = RecordingPeripheralLink(mtu: mtu)
        return (link, try await run(frames, on: link, clock: clock, timers: timers))
    }

    /// Returns once the confirmations of `writes` configuration writes are under way beside the `timers` running.
    func confirming(_ writes: Int, besides timers: Int = 1) async {
        #expect(await clock.sleepers(atLeast: timers + writes), "\(writes) confirmation(s) under way")
    }

    /// Lets the confirmation of a configuration write go out (`confirmationDelay` after the write was answered).
    func confirm() async {
        await confirming(1)
        await clock.advance(by: SimulatedBoseFrames.confirmationDelay, timers: 1)
    }

    // MARK: What a central discovers and reads

    @Test("registered as bose_frames; advertises 0xFDD2 as \"Bose Frames XXXX\" with Device Information by Bose")
    func advertisementAndTable() async throws {
        let kind = try #require(SimulatedDeviceCatalog.kind(named: "bose_frames"))
        let device = try kind.make(SimulatedDeviceConfiguration(seed: 0x1234_ABCD))
        #expect(device.advertisement.serviceUUIDs == [BluetoothUUID(0xFDD2)])
        #expect(device.advertisement.localName == "Bose Frames ABCD")
        #expect(device.deviceName == "Bose Frames ABCD")

        let service = try #require(device.services.first { $0.uuid == BluetoothUUID(0xFDD2) })
        let flags = Dictionary(uniqueKeysWithValues: service.characteristics.map { ($0.uuid, $0.flags) })
        #expect(flags == [
            Self.deviceInformation: [.read, .notify],
            Self.sensorInformation: .read,
            Self.sensorConfiguration: [.read, .write, .notify],
            Self.sensorData: .notify,
            Self.gestureInformation: .read,
            Self.gestureConfiguration: [.read, .write, .notify],
            Self.gestureData: .notify,
        ])
        #expect(device.services.map(\.uuid).contains(BluetoothUUID(0x180A)))
        #expect(try DeviceInformationString.decode(await device.read(BluetoothUUID(0x2A29))) == "Bose Corporation")
        #expect(try DeviceInformationString.decode(await device.read(BluetoothUUID(0x2A24))) == "Bose Frames Alto")
        let rondo = try frames(["variant": .string("rondo")])
        #expect(try DeviceInformationString.decode(await rondo.read(BluetoothUUID(0x2A24))) == "Bose Frames Rondo")
        #expect(try BoseDeviceInformation.decode(await rondo.read(Self.deviceInformation)).variant == 0x02)
        await #expect(throws: ATTError.readNotPermitted) { try await device.read(Self.sensorData) }
    }

    @Test("WearableDeviceInformation: Frames (0x402C) Alto, all seven sensors, double tap / nod / shake, 20 ms, 3 active")
    func deviceInformationRead() async throws {
        let information = try BoseDeviceInformation.decode(await frames().read(Self.deviceInformation))
        #expect(information.productID == 0x402C)
        #expect(information.variant == 0x01)
        #expect(information.availableSensors == BoseSensor.allCases)
        #expect(information.availableGestures == [.doubleTap, .headNod, .headShake])
        #expect(information.transmissionPeriodMilliseconds == 20)
        #expect(information.maxPayloadPerTransmissionPeriod == 160)
        #expect(information.maxActiveSensors == 3)
        #expect(information.status == [])
        let two = try BoseDeviceInformation.decode(await frames(["max_active_sensors": .int(2)]).read(Self.deviceInformation))
        #expect(two.maxActiveSensors == 2)
    }

    @Test("SensorInformation: every sensor at 20…320 ms, layout sample lengths, documented scaling")
    func sensorInformationRead() async throws {
        let information = try BoseSensorInformation.decode(await frames().read(Self.sensorInformation))
        #expect(information.entries.compactMap(\.sensor) == BoseSensor.allCases)
        for entry in information.entries {
            #expect(entry.availablePeriods == BoseSamplePeriod.allCases.sorted())
            #expect(Int(entry.sampleLength) == entry.sensor?.payloadLength)
        }
        func entry(_ sensor: BoseSensor) throws -> BoseSensorInformation.Entry { try #require(information.entry(for: sensor)) }
        #expect(try entry(.accelerometer).scale(32767) == 16) // g
        #expect(try entry(.accelerometer).scale(0) == 0)
        #expect(try entry(.gyroscope).scale(-32767) == -2000) // °/s
        #expect(try entry(.rotation).scale(16384) == 1)
        #expect(try entry(.gameRotation).scale(-8192) == -0.5)
        #expect(try entry(.orientation).scale(32767) == 180) // degrees
        #expect(try entry(.magnetometer).scale(32767) == 1300) // µT
        #expect(try entry(.uncalibratedMagnetometer).scale(32767) == 1300)
    }

    @Test("gestures: three available, each configured by one byte; everything starts disabled")
    func initialConfigurationReads() async throws {
        let device = try frames()
        let gestures = try BoseGestureInformation.decode(await device.read(Self.gestureInformation))
        #expect(gestures.gestures == [.doubleTap, .headNod, .headShake])
        #expect(gestures.entries.allSatisfy { $0.configurationLength == 1 })
        let sensors = try BoseSensorConfiguration.decode(await device.read(Self.sensorConfiguration))
        #expect(sensors.entries.map(\.sensorID) == Array(0...6))
        #expect(sensors.enabledSensors.isEmpty)
        let gestureConfiguration = try BoseGestureConfiguration.decode(await device.read(Self.gestureConfiguration),
                                                                       information: gestures)
        #expect(gestureConfiguration.entries.map(\.gestureID) == [0x81, 0x82, 0x83])
        #expect(gestureConfiguration.enabledGestures.isEmpty)
    }

    @Test("the raw value a device sends is the inverse of the scaling, rounded and clamped")
    func inverseScaling() throws {
        for sensor in BoseSensor.allCases {
            let entry = try #require(SimulatedBoseFrames.sensorInformation.entry(for: sensor))
            for raw: Int16 in [entry.minimumRaw, -1234, -1, 0, 1, 777, entry.maximumRaw] {
                #expect(entry.rawValue(for: entry.scale(raw)) == raw, "\(sensor) \(raw)")
            }
            #expect(entry.rawValue(for: 1e9) == entry.maximumRaw)
            #expect(entry.rawValue(for: -1e9) == entry.minimumRaw)
        }
        let accelerometer = try #require(SimulatedBoseFrames.sensorInformation.entry(for: .accelerometer))
        #expect(accelerometer.rawValue(for: 1) == 2048) // 1 g × 32767 / 16 = 2047.9
    }

    // MARK: Configuration writes

    @Test("refused sensor configurations answer the documented ATT code and change nothing", arguments: [
        ([0x00, 0x00], 0x80), // not a multiple of 3
        ([0x07, 0x00, 0x14], 0x80), // no sensor 7
        ([0x00, 0x00, 0x14, 0x00, 0x00, 0x14], 0x80), // listed twice
        ([0x00, 0x00, 0x1E], 0x81), // 30 ms is not offered
        ([0x00, 0x01, 0x40, 0x01, 0x00, 0x0A], 0x81), // 320 ms fine, 10 ms not
        ([0x00, 0x00, 0x14, 0x01, 0x00, 0x28], 0x82), // 20 ms and 40 ms
        ([0x00, 0x00, 0x14, 0x01, 0x00, 0x14, 0x02, 0x00, 0x14, 0x05, 0x00, 0x14], 0x83), // four sensors
    ] as [([UInt8], UInt8)])
    func refusedSensorConfiguration(value: [UInt8], code: UInt8) async throws {
        let device = try frames()
        let accepted: [UInt8] = [0x05, 0x00, 0x50] // magnetometer at 80 ms
        try await device.write(Self.sensorConfiguration, value: accepted, kind: .request)
        let before = try await device.read(Self.sensorConfiguration)
        await #expect(throws: ATTError.application(code)) {
            try await device.write(Self.sensorConfiguration, value: value, kind: .request)
        }
        #expect(try await device.read(Self.sensorConfiguration) == before)
        #expect(try BoseSensorConfiguration.decode(before).enabledSensors == [.magnetometer])
    }

    @Test("max_active_sensors bounds how many sensors may run together")
    func maxActiveSensorsOption() async throws {
        let device = try frames(["max_active_sensors": .int(1)])
        await #expect(throws: SimulatedBoseFrames.tooManySensors) {
            try await device.write(Self.sensorConfiguration, value: [0x00, 0x00, 0x14, 0x01, 0x00, 0x14], kind: .request)
        }
        try await device.write(Self.sensorConfiguration, value: [0x00, 0x00, 0x14, 0x01, 0x00, 0x00], kind: .request)
    }

    @Test("refused gesture configurations answer the documented ATT code and change nothing", arguments: [
        ([0x81], 0x80), // odd length
        ([0x80, 0x01], 0x80), // Frames have no single tap
        ([0x90, 0x00], 0x80), // no such gesture
        ([0x81, 0x01, 0x81, 0x00], 0x80), // listed twice
        ([0x81, 0x01, 0x82, 0x02], 0x84), // state 2
    ] as [([UInt8], UInt8)])
    func refusedGestureConfiguration(value: [UInt8], code: UInt8) async throws {
        let device = try frames()
        try await device.write(Self.gestureConfiguration, value: [0x83, 0x01], kind: .request)
        let before = try await device.read(Self.gestureConfiguration)
        await #expect(throws: ATTError.application(code)) {
            try await device.write(Self.gestureConfiguration, value: value, kind: .request)
        }
        #expect(try await device.read(Self.gestureConfiguration) == before)
        #expect(try BoseGestureConfiguration.decode(before, information: device.gestureInformation).enabledGestures == [.headShake])
    }

    @Test("only the two configuration characteristics are writable")
    func otherWrites() async throws {
        let device = try frames()
        for uuid in [Self.deviceInformation, Self.sensorInformation, Self.sensorData, Self.gestureData, BluetoothUUID(0x2A29)] {
            await #expect(throws: ATTError.writeNotPermitted) { try await device.write(uuid, value: [0x00], kind: .request) }
        }
    }

    @Test("an accepted write is notified as the full configuration (unlisted sensors disabled); reads agree")
    func acceptedWriteIsNotified() async throws {
        let device = try frames()
        let (link, task) = try await connect(device)
        defer { task.cancel() }
        try await device.write(Self.sensorConfiguration, value: [0x01, 0x00, 0x28, 0x00, 0x00, 0x28], kind: .request)
        #expect(link.values(of: Self.sensorConfiguration).isEmpty, "answered first, notified a moment later")
        await confirm()
        #expect(await link.until { link.values(of: Self.sensorConfiguration).count == 1 })
        let notified = try BoseSensorConfiguration.decode(try #require(link.values(of: Self.sensorConfiguration).first))
        #expect(notified.entries.map(\.sensorID) == Array(0...6))
        #expect(notified.entries.map(\.periodMilliseconds) == [40, 40, 0, 0, 0, 0, 0])
        #expect(try BoseSensorConfiguration.decode(await device.read(Self.sensorConfiguration)) == notified)

        try await device.write(Self.gestureConfiguration, value: [0x82, 0x01], kind: .request)
        await confirm()
        #expect(await link.until { link.values(of: Self.gestureConfiguration).count == 1 })
        let gestures = try BoseGestureConfiguration.decode(try #require(link.values(of: Self.gestureConfiguration).first),
                                                           information: device.gestureInformation)
        #expect(gestures.entries == [
            .init(gestureID: 0x81, isEnabled: false), .init(gestureID: 0x82, isEnabled: true), .init(gestureID: 0x83, isEnabled: false),
        ])

        // Writing everything off is a configuration too.
        try await device.write(Self.sensorConfiguration, value: [], kind: .request)
        await confirm()
        #expect(await link.until { link.values(of: Self.sensorConfiguration).count == 2 })
        let allOff = try #require(link.values(of: Self.sensorConfiguration).dropFirst().first)
        #expect(try BoseSensorConfiguration.decode(allOff).enabledSensors.isEmpty)
    }

    @Test("confirm_configuration false: the write is applied but nothing is notified")
    func silentDevice() async throws {
        let device = try frames(["confirm_configuration": .bool(false)])
        let (link, task) = try await connect(device)
        defer { task.cancel() }
        try await device.write(Self.gestureConfiguration, value: [0x81, 0x01], kind: .request)
        await clock.advance(by: .milliseconds(200), timers: 1)
        #expect(clock.sleeperCount == 1, "no confirmation under way: only the sensor tick")
        #expect(link.values(of: Self.gestureConfiguration).isEmpty)
        #expect(try BoseGestureConfiguration.decode(await device.read(Self.gestureConfiguration), information: device.gestureInformation)
            .enabledGestures == [.doubleTap])
    }

    @Test("every connection starts with everything disabled: the device forgets the configuration with the link")
    func configurationForgottenOnDisconnect() async throws {
        let device = try frames()
        let (_, first) = try await connect(device)
        try await device.write(Self.sensorConfiguration, value: [0x00, 0x00, 0x14], kind: .request)
        try await device.write(Self.gestureConfiguration, value: [0x81, 0x01], kind: .request)
        #expect(try BoseSensorConfiguration.decode(await device.read(Self.sensorConfiguration)).enabledSensors == [.accelerometer])
        await confirming(2)
        first.cancel()
        await first.value
        #expect(await device.isConnected == false)
        await clock.advance(by: SimulatedBoseFrames.confirmationDelay)
        #expect(clock.sleeperCount == 0, "the confirmations went to a link that is gone, and nothing else runs")
        #expect(try BoseSensorConfiguration.decode(await device.read(Self.sensorConfiguration)).enabledSensors.isEmpty)
        #expect(try BoseGestureConfiguration.decode(await device.read(Self.gestureConfiguration), information: device.gestureInformation)
            .enabledGestures.isEmpty)

        let (link, second) = try await connect(device)
        defer { second.cancel() }
        await clock.advance(by: .milliseconds(100), timers: 1)
        #expect(link.values(of: Self.sensorData).isEmpty, "nothing streams until the central configures the sensors")
    }

    // MARK: Streaming

    @Test("accelerometer and gyroscope at 20 ms: 50 records/s each, 20 ms apart, gravity ≈ 1 g")
    func streamsAtTheConfiguredPeriod() async throws {
        let device = try frames(seed: 11)
        let information = try BoseSensorInformation.decode(await device.read(Self.sensorInformation))
        let (link, task) = try await connect(device)
        try await device.write(Self.sensorConfiguration, value: [0x00, 0x00, 0x14, 0x01, 0x00, 0x14], kind: .request)
        await confirming(1)
        await clock.advance(by: .milliseconds(1200), timers: 1)
        task.cancel()
        await task.value

        let notifications = link.values(of: Self.sensorData)
        let records = try notifications.flatMap { try BoseSensorData.decode($0, information: information) }
        let accelerometer = records.filter { $0.sensor == .accelerometer }
        let gyroscope = records.filter { $0.sensor == .gyroscope }
        #expect(accelerometer.count == 60, "1.2 s at 20 ms")
        #expect(gyroscope.count == accelerometer.count)
        #expect(records.allSatisfy { $0.sensor == .accelerometer || $0.sensor == .gyroscope })
        #expect(notifications.allSatisfy { $0.count <= 247 - 3 })

        // One timestamp per tick, ticks exactly 20 ms apart on the device's clock (wrapping at 65536).
        let ticks = accelerometer.map(\.timestamp)
        #expect(ticks == gyroscope.map(\.timestamp))
        #expect(zip(ticks, ticks.dropFirst()).allSatisfy { $1 &- $0 == 20 })

        let entry = try #require(information.entry(for: .accelerometer))
        for record in accelerometer {
            guard case .vector(let x, let y, let z, let accuracy) = record.reading(scaledWith: entry) else {
                Issue.record("not a vector: \(record)")
                continue
            }
            let magnitude = (x * x + y * y + z * z).squareRoot()
            #expect(abs(magnitude - 1) < 0.03, "\(magnitude) g")
            #expect(z < -0.9, "gravity is mostly on z (Bose's z points down)")
            #expect(accuracy == .high)
        }
        let gyroscopeEntry = try #require(information.entry(for: .gyroscope))
        for record in gyroscope {
            guard case .vector(let x, let y, let z, _) = record.reading(scaledWith: gyroscopeEntry) else { continue }
            #expect(max(abs(x), abs(y), abs(z)) < 200, "a head turns at tens of degrees per second")
        }
    }

    @Test("records beyond mtu − 3 bytes are split over several notifications, never inside a record")
    func splitsAtTheMTU() async throws {
        let device = try frames()
        let information = try BoseSensorInformation.decode(await device.read(Self.sensorInformation))
        let (link, task) = try await connect(device, mtu: 23)
        // Accelerometer (10 bytes a record), rotation (13), uncalibrated magnetometer (15) at 40 ms.
        try await device.write(Self.sensorConfiguration, value: [0x00, 0x00, 0x28, 0x02, 0x00, 0x28, 0x06, 0x00, 0x28], kind: .request)
        await confirming(1)
        // The idle tick at 20 ms takes the new period; records at 60, 100 and 140 ms.
        await clock.advance(by: .milliseconds(140), timers: 1)
        task.cancel()
        await task.value
        let notifications = link.values(of: Self.sensorData)
        #expect(notifications.count == 9)
        #expect(notifications.allSatisfy { $0.count <= 20 })
        let perNotification = try notifications.map { try BoseSensorData.decode($0, information: information) }
        #expect(perNotification.allSatisfy { $0.count == 1 }, "10 + 13 and 13 + 15 bytes exceed 20")
        let records = perNotification.flatMap { $0 }
        let ticks = records.count / 3
        for tick in 0..<ticks {
            let group = records[(tick * 3)..<(tick * 3 + 3)]
            #expect(group.map(\.sensor) == [.accelerometer, .rotation, .uncalibratedMagnetometer])
            #expect(Set(group.map(\.timestamp)).count == 1, "one timestamp for the records of one tick")
        }
    }

    @Test("packing: records fill a notification up to the limit and a record never straddles two")
    func packing() {
        let accelerometer = BoseSensorRecord(sensor: .accelerometer, timestamp: 1, payload: .vector(x: 1, y: 2, z: 3, accuracy: 3))
        let gyroscope = BoseSensorRecord(sensor: .gyroscope, timestamp: 1, payload: .vector(x: 4, y: 5, z: 6, accuracy: 3))
        let uncalibrated = BoseSensorRecord(sensor: .uncalibratedMagnetometer, timestamp: 1,
                                            payload: .uncalibratedVector(x: 1, y: 2, z: 3, biasX: 4, biasY: 5, biasZ: 6))
        let records = [accelerometer, gyroscope, uncalibrated] // 10 + 10 + 15 bytes
        let all = BoseSensorData.encode(records, information: SimulatedBoseFrames.sensorInformation)
        #expect(SimulatedBoseFrames.notifications(records, limit: 20).map(\.count) == [20, 15])
        #expect(SimulatedBoseFrames.notifications(records, limit: 34).map(\.count) == [20, 15])
        #expect(SimulatedBoseFrames.notifications(records, limit: 35) == [all])
        #expect(SimulatedBoseFrames.notifications(records, limit: 9).map(\.count) == [10, 10, 15], "too small: one record each")
        #expect(SimulatedBoseFrames.notifications(records, limit: 20).reduce([], +) == all)
        #expect(SimulatedBoseFrames.notifications([], limit: 20).isEmpty)
    }

    @Test("a new period takes effect: after switching from 20 ms to 80 ms records are 80 ms apart")
    func periodChange() async throws {
        let device = try frames()
        let information = try BoseSensorInformation.decode(await device.read(Self.sensorInformation))
        let (link, task) = try await connect(device)
        defer { task.cancel() }
        try await device.write(Self.sensorConfiguration, value: [0x03, 0x00, 0x14], kind: .request)
        await confirming(1)
        await clock.advance(by: .milliseconds(100), timers: 1)
        #expect(link.values(of: Self.sensorData).count == 5)
        try await device.write(Self.sensorConfiguration, value: [0x03, 0x00, 0x50], kind: .request)
        await confirming(1)
        // The 20 ms tick at 120 ms takes the new period; records at 200, 280, … 520 ms.
        await clock.advance(by: .milliseconds(420), timers: 1)
        #expect(link.values(of: Self.sensorData).count == 10)
        let records = try link.values(of: Self.sensorData).flatMap { try BoseSensorData.decode($0, information: information) }
        #expect(records.allSatisfy { $0.sensor == .gameRotation })
        let ticks = records.map(\.timestamp)
        let steps = zip(ticks, ticks.dropFirst()).map { $1 &- $0 }
        #expect(steps.prefix(3).allSatisfy { $0 == 20 })
        #expect(steps.suffix(3).allSatisfy { $0 == 80 }, "\(steps)")
        for record in records {
            guard case .quaternion(let x, let y, let z, let w, let accuracy) = record.reading(scaledWith: information.entries[3]) else {
                Issue.record("not a quaternion")
                continue
            }
            #expect(abs((x * x + y * y + z * z + w * w).squareRoot() - 1) < 0.001)
            #expect(accuracy == nil)
        }
    }

    // MARK: Gestures

    @Test("scripted gestures are sent only when enabled; the head visibly nods before head_nod")
    func scriptedGestures() async throws {
        let device = try frames(["gestures": .string("head_shake@0.4, double_tap@0.6,head_nod@1.3")])
        let information = try BoseSensorInformation.decode(await device.read(Self.sensorInformation))
        let (link, task) = try await connect(device, timers: 2)
        defer { task.cancel() }
        try await device.write(Self.gestureConfiguration, value: [0x81, 0x01, 0x82, 0x01, 0x83, 0x00], kind: .request)
        try await device.write(Self.sensorConfiguration, value: [0x04, 0x00, 0x14, 0x01, 0x00, 0x14], kind: .request)
        await confirming(2, besides: 2)
        // Two timers run until the script's last gesture (1.3 s), the sensor tick and the script: each deadline waits for
        // both to sleep again. Waiting for one let the clock run on while the tick was still sending (the script's
        // timer counted), so a loaded machine lost ticks. From 1.3 s the tick runs alone; past the nod (1.3 s + 0.5 s)
        // it goes on.
        await clock.advance(by: .milliseconds(1280), timers: 2)
        await clock.advance(by: .milliseconds(620), timers: 1)
        #expect(link.values(of: Self.sensorData).count == 95)
        let events = try link.values(of: Self.gestureData).flatMap { try BoseGestureEvent.decode($0) }
        #expect(events.map(\.gesture) == [.doubleTap, .headNod], "head_shake was not enabled")

        let records = try link.values(of: Self.sensorData).flatMap { try BoseSensorData.decode($0, information: information) }
        let pitches = records.filter { $0.sensor == .orientation }.compactMap { record -> Double? in
            guard case .vector(let pitch, _, _, _) = record.reading(scaledWith: information.entries[4]) else { return nil }
            return pitch
        }
        #expect((pitches.min() ?? 0) < -10, "the nod dips the head by 15°: \(pitches.min() ?? 0)")
        let pitchRates = records.filter { $0.sensor == .gyroscope }.compactMap { record -> Double? in
            guard case .vector(let x, _, _, _) = record.reading(scaledWith: information.entries[1]) else { return nil }
            return x
        }
        #expect((pitchRates.min() ?? 0) < -30 && (pitchRates.max() ?? 0) > 30, "down and up again about x")
    }

    @Test("button_press is a double tap now, reported only when double tap is enabled")
    func buttonPress() async throws {
        let device = try frames()
        let (link, task) = try await connect(device)
        defer { task.cancel() }
        #expect(await device.handle(.buttonPress, link: link))
        #expect(link.values(of: Self.gestureData).isEmpty)
        try await device.write(Self.gestureConfiguration, value: [0x81, 0x01], kind: .request)
        #expect(await device.handle(.buttonPress, link: link))
        let events = try link.values(of: Self.gestureData).flatMap { try BoseGestureEvent.decode($0) }
        #expect(events.map(\.gesture) == [.doubleTap])
        #expect(await device.handle(.findMyPhone, link: link) == false)
        #expect(await device.handle(.spotCheck, link: link) == false)
    }

    // MARK: Options

    @Test("options: unknown keys, unavailable gestures, malformed scripts and out-of-range values name the key")
    func options() throws {
        #expect(throws: SimulatedDeviceConfigurationError.self) { try frames(["rate_hz": .int(50)]) }
        #expect(throws: SimulatedDeviceConfigurationError.invalidOption(
            key: "gestures", reason: "gesture must be one of double_tap, head_nod, head_shake, got \"single_tap\"")) {
            try frames(["gestures": .string("single_tap@1")])
        }
        for script in ["head_nod", "head_nod@soon", "head_nod@-1", "@3", "head_nod@1@2"] {
            #expect(throws: SimulatedDeviceConfigurationError.self, "\(script)") { try frames(["gestures": .string(script)]) }
        }
        #expect(throws: SimulatedDeviceConfigurationError.self) { try frames(["max_active_sensors": .int(8)]) }
        #expect(throws: SimulatedDeviceConfigurationError.self) { try frames(["variant": .string("tempo")]) }
        #expect(throws: SimulatedDeviceConfigurationError.self) { try frames(["confirm_configuration": .int(1)]) }
        #expect(try BoseGestureScript.parse("head_nod@2, double_tap@1,head_shake@2", key: "gestures",
                                            available: SimulatedBoseFrames.gestures)
            == [.init(gesture: .doubleTap, seconds: 1), .init(gesture: .headNod, seconds: 2), .init(gesture: .headShake, seconds: 2)])
        #expect(try BoseGestureScript.parse("", key: "gestures", available: SimulatedBoseFrames.gestures).isEmpty)
    }

    // MARK: The head

    @Test("the head motion is deterministic for a seed: same times, same readings; another seed differs")
    func motionIsDeterministic() {
        var first = BoseHeadMotion(seed: 5)
        var second = BoseHeadMotion(seed: 5)
        var other = BoseHeadMotion(seed: 6)
        var differs = false
        for tick in 0..<500 {
            let time = Double(tick) * 0.02
            let reading = first.sample(at: time)
            #expect(reading == second.sample(at: time))
            if reading != other.sample(at: time) { differs = true }
        }
        #expect(differs)
    }

    @Test("a minute of head motion: unit quaternions, gravity on z, slow turns seen by gyroscope and heading")
    func motionIsPlausible() {
        var motion = BoseHeadMotion(seed: 21)
        var headings: [Double] = []
        var largestYawRate = 0.0
        for tick in 0..<3000 {
            let reading = motion.sample(at: Double(tick) * 0.02)
            #expect(abs(reading.rotation.norm - 1) < 1e-9)
            #expect(abs(reading.gameRotation.norm - 1) < 1e-9)
            #expect(reading.rotation.w >= 0)
            #expect(abs(reading.acceleration.magnitude - BoseHeadMotion.gravity) < 0.1)
            #expect(reading.acceleration.z < -9)
            #expect(abs(reading.magneticField.magnitude - BoseHeadMotion.earthField.magnitude) < 1)
            #expect(abs(reading.orientation.x) < 4 && abs(reading.orientation.y) < 4, "sway only, no nod")
            headings.append(reading.orientation.z)
            largestYawRate = max(largestYawRate, abs(reading.angularVelocity.z))
        }
        #expect(largestYawRate > 10, "a head turn reaches tens of degrees per second: \(largestYawRate)")
        #expect(largestYawRate < 200)
        let unwrapped = headings.map { ($0 - headings[0] + 540).truncatingRemainder(dividingBy: 360) - 180 }
        #expect((unwrapped.max() ?? 0) - (unwrapped.min() ?? 0) > 10, "the heading changes with the turns")
    }

    @Test("a nod dips the pitch 15° twice within the second before it ends; a double tap knocks the accelerometer")
    func gesturesMoveTheHead() {
        var motion = BoseHeadMotion(seed: 3)
        motion.perform(.nod, endingAt: 5)
        motion.perform(.doubleTap, endingAt: 8)
        var pitchDuringNod: [Double] = []
        var pitchRateDuringNod: [Double] = []
        var largestKnock = 0.0
        for tick in 0..<500 {
            let time = Double(tick) * 0.02
            let reading = motion.sample(at: time)
            if time > 4 && time <= 5 {
                pitchDuringNod.append(reading.orientation.x)
                pitchRateDuringNod.append(reading.angularVelocity.x)
            } else {
                #expect(abs(reading.orientation.x) < 4, "at \(time)")
            }
            if time > 7.6 && time < 8.1 { largestKnock = max(largestKnock, abs(reading.acceleration.x)) }
        }
        #expect((pitchDuringNod.min() ?? 0) < -12)
        #expect((pitchRateDuringNod.min() ?? 0) < -40 && (pitchRateDuringNod.max() ?? 0) > 40)
        #expect(largestKnock > 9.81, "1.5 g at the peak, sampled every 20 ms: \(largestKnock)")
    }
}
