import Logging
import Synchronization
import Testing
import Wear2MQTTTesting

@testable import Wearables
@testable import SimulatedWearables

/// The simulated Empatica E4 driven directly, with a link that records what the band pushes, and its signal
/// source stepped on its own. Every value is read back through the E4 codecs the driver uses. The band runs on a
/// manual clock, so what it sends in a span of time is counted exactly, however loaded the machine.
@Suite("Simulated Empatica E4")
struct SimulatedEmpaticaE4Tests {
    static let bvp = BluetoothUUID(E4UUID.Short.bvp)
    static let accelerometer = BluetoothUUID(E4UUID.Short.accelerometer)
    static let temperature = BluetoothUUID(E4UUID.Short.temperature)
    static let eda = BluetoothUUID(E4UUID.Short.eda)
    static let control = BluetoothUUID(E4UUID.Short.control)
    static let battery = BluetoothUUID(E4UUID.Short.battery)
    static let tag = BluetoothUUID(0x3EB4)
    static let command = BluetoothUUID(E4UUID.Short.command)
    static let sensors: [BluetoothUUID] = [bvp, accelerometer, temperature, eda]
    /// 2026-11-21 12:05:04 UTC: any time after 1970 and before 2106 would do.
    static let start: UInt32 = 1_795_298_704

    /// The clock every band of a test runs on.
    let clock = ManualClock()
    /// The battery's timer; the four streams' once started.
    static let idleTimers = 1
    static let streamingTimers = 5

    func band(_ options: [String: SimulationOptionValue] = [:], seed: UInt64 = 7) throws -> SimulatedEmpaticaE4 {
        try SimulatedEmpaticaE4(clocked(seed: seed, options: options, clock: clock))
    }

    /// Runs the band's behaviour on a new link, as the host does when a central connects.
    func connect(_ band: SimulatedEmpaticaE4) async throws -> (RecordingPeripheralLink, Task<Void, Never>) {
        let link = RecordingPeripheralLink()
        return (link, try await run(band, on: link, clock: clock, timers: Self.idleTimers))
    }

    /// Sends the start command and returns once the four streams have armed their schedules.
    func start(_ band: SimulatedEmpaticaE4, at seconds: UInt32 = SimulatedEmpaticaE4Tests.start) async throws {
        try await band.write(Self.command, value: Self.startCommand(seconds), kind: .request)
        try #require(await clock.sleepers(atLeast: Self.streamingTimers))
    }

    /// How many packets `stream` sends in `span`: one per whole interval.
    static func packets(_ stream: E4Stream, in span: Duration) -> Int { Int(span / stream.packetInterval) }

    static func startCommand(_ seconds: UInt32 = start) -> [UInt8] { E4StartCommand(unixSeconds: seconds).encode() }

    // MARK: What a central discovers and reads

    @Test("registered as empatica_e4; advertises exactly \"Empatica E4\" with the sensors service 0x3EA0")
    func advertisement() throws {
        let kind = try #require(SimulatedDeviceCatalog.kind(named: "empatica_e4"))
        let device = try kind.make(SimulatedDeviceConfiguration(seed: 0x1234_ABCD))
        #expect(device.advertisement.localName == "Empatica E4")
        #expect(device.deviceName == "Empatica E4")
        #expect(device.advertisement.serviceUUIDs == [BluetoothUUID(0x3EA0)])
        #expect(device.advertisement.isConnectable)
        let renamed = try kind.make(SimulatedDeviceConfiguration(name: "E4 lab 2", seed: 1))
        #expect(renamed.advertisement.localName == "E4 lab 2")
    }

    @Test("GATT: sensors notify; status has control, battery and the modeled tag; command takes writes")
    func table() throws {
        let device = try band()
        func flags(_ service: String) throws -> [BluetoothUUID: CharacteristicFlags] {
            let uuid = try #require(BluetoothUUID(string: service))
            let found = try #require(device.services.first { $0.uuid == uuid }, "service \(service)")
            return Dictionary(uniqueKeysWithValues: found.characteristics.map { ($0.uuid, $0.flags) })
        }
        #expect(try flags(E4UUID.Service.sensors) == [
            Self.bvp: .notify, Self.accelerometer: .notify, Self.temperature: .notify, Self.eda: .notify,
        ])
        #expect(try flags(E4UUID.Service.status) == [
            Self.control: .notify, Self.battery: [.read, .notify], Self.tag: .notify,
        ])
        #expect(try flags(E4UUID.Service.command) == [Self.command: [.write, .writeWithoutResponse]])
        #expect(device.services.map(\.uuid).contains(BluetoothUUID(0x180A)))
        #expect(BluetoothUUID(string: E4TagPress.uuidString) == Self.tag)
    }

    @Test("Device Information says Empatica E4 with an A0xxxx serial; the battery reads 80 %")
    func deviceInformation() async throws {
        let device = try band(seed: 0x0000_BEEF)
        #expect(try DeviceInformationString.decode(await device.read(BluetoothUUID(0x2A29))) == "Empatica")
        #expect(try DeviceInformationString.decode(await device.read(BluetoothUUID(0x2A24))) == "E4")
        #expect(try DeviceInformationString.decode(await device.read(BluetoothUUID(0x2A25))) == "A0BEEF")
        let named = try band(["serial": .string("A01D4E")])
        #expect(try DeviceInformationString.decode(await named.read(BluetoothUUID(0x2A25))) == "A01D4E")
        #expect(try E4BatteryLevel.decode(await device.read(Self.battery)).percent == 80)
        #expect(try E4BatteryLevel.decode(await band(["battery": .int(35)]).read(Self.battery)).percent == 35)
        for uuid in Self.sensors + [Self.control, Self.tag, Self.command] {
            await #expect(throws: ATTError.readNotPermitted, "\(uuid)") { try await device.read(uuid) }
        }
    }

    // MARK: Starting and stopping

    @Test("nothing streams before the start command, even with every notification enabled; then all four do")
    func nothingBeforeStart() async throws {
        let device = try band()
        let (link, task) = try await connect(device)
        defer { task.cancel() }
        // Three BVP intervals and more: a band that streamed without the command would have sent by now.
        await clock.advance(by: .milliseconds(600), timers: Self.idleTimers)
        #expect(Self.sensors.allSatisfy { link.values(of: $0).isEmpty })
        #expect(await device.isStreaming == false)

        try await start(device)
        await clock.advance(by: .milliseconds(1500), timers: Self.streamingTimers)
        #expect(Self.sensors.map { link.values(of: $0).count } == [8, 8, 1, 1], "BVP, accelerometer, temperature, EDA")
    }

    @Test("malformed start commands are refused (0x0D wrong length, 0x80 another opcode) and start nothing",
          arguments: [
              ([], 0x0D), ([0x01], 0x0D), ([0x02], 0x0D), ([0x01, 0x00, 0x00, 0x00], 0x0D),
              ([0x01, 0x00, 0x00, 0x00, 0x00, 0x00], 0x0D), ([0x02, 0x90, 0x15, 0x02, 0x6B], 0x80),
              ([0x00, 0x90, 0x15, 0x02, 0x6B], 0x80),
          ] as [([UInt8], UInt8)])
    func refusedStartCommand(value: [UInt8], code: UInt8) async throws {
        let device = try band()
        let (link, task) = try await connect(device)
        defer { task.cancel() }
        await #expect(throws: ATTError(code: code)) {
            try await device.write(Self.command, value: value, kind: .request)
        }
        // Unanswered as a write command, but refused all the same.
        await #expect(throws: ATTError(code: code)) {
            try await device.write(Self.command, value: value, kind: .command)
        }
        #expect(await device.isStreaming == false)
        await clock.advance(by: .milliseconds(400), timers: Self.idleTimers)
        #expect(Self.sensors.allSatisfy { link.values(of: $0).isEmpty })
    }

    @Test("the start command is the only write; a write command starts streaming as a write request does")
    func writes() async throws {
        let device = try band()
        for uuid in Self.sensors + [Self.control, Self.battery, Self.tag, BluetoothUUID(0x2A29)] {
            await #expect(throws: ATTError.writeNotPermitted, "\(uuid)") {
                try await device.write(uuid, value: Self.startCommand(), kind: .request)
            }
        }
        let (link, task) = try await connect(device)
        defer { task.cancel() }
        try await device.write(Self.command, value: Self.startCommand(), kind: .command)
        #expect(await device.isStreaming)
        #expect(await clock.sleepers(atLeast: Self.streamingTimers))
        await clock.advance(by: E4Stream.bvp.packetInterval, timers: Self.streamingTimers)
        #expect(link.values(of: Self.bvp).count == 1)
    }

    @Test("the link dropping stops streaming; the next connection streams only after its own start command")
    func disconnectStops() async throws {
        let device = try band()
        let (link, task) = try await connect(device)
        try await start(device)
        await clock.advance(by: .milliseconds(500), timers: Self.streamingTimers)
        #expect(link.values(of: Self.bvp).count == 2)
        task.cancel()
        await task.value
        #expect(await device.isConnected == false)
        #expect(clock.sleeperCount == 0, "no timer outlives the link")
        let sent = link.count
        await clock.advance(by: .milliseconds(500))
        #expect(link.count == sent, "nothing after the link went")

        let (second, secondTask) = try await connect(device)
        defer { secondTask.cancel() }
        await clock.advance(by: .milliseconds(500), timers: Self.idleTimers)
        #expect(Self.sensors.allSatisfy { second.values(of: $0).isEmpty }, "a new connection needs a new command")
        try await start(device, at: Self.start + 3600)
        await clock.advance(by: .seconds(3), timers: Self.streamingTimers)
        #expect(second.values(of: Self.eda).count == 2)
        let counters = try second.values(of: Self.eda).map { try E4EDAPacket.decode($0).counter }
        #expect(Array(counters.prefix(2)) == [0, 1], "the counter starts again at 0")
    }

    @Test("a second start command while streaming is accepted and changes nothing")
    func secondStartCommand() async throws {
        let device = try band()
        let (link, task) = try await connect(device)
        defer { task.cancel() }
        try await start(device)
        await clock.advance(by: .milliseconds(1500), timers: Self.streamingTimers)
        #expect(link.values(of: Self.eda).count == 1)
        try await device.write(Self.command, value: Self.startCommand(Self.start + 999), kind: .request)
        await clock.advance(by: .seconds(3), timers: Self.streamingTimers)
        let counters = try link.values(of: Self.eda).map { try E4EDAPacket.decode($0).counter }
        #expect(counters == [0, 1, 2], "one schedule, one counter")
    }

    // MARK: What streams

    @Test("after the start command every stream decodes with its codec, with plausible values and rising counters")
    func streamsDecode() async throws {
        let device = try band()
        let (link, task) = try await connect(device)
        defer { task.cancel() }
        try await start(device)
        await clock.advance(by: .milliseconds(4500), timers: Self.streamingTimers)
        #expect(Self.sensors.map { link.values(of: $0).count } == [26, 24, 4, 3], "BVP, accelerometer, temperature, EDA")
        task.cancel()
        await task.value

        let bvp = try link.values(of: Self.bvp).map { try E4BVPPacket.decode($0) }
        #expect(link.values(of: Self.bvp).allSatisfy { $0.count == E4BVPPacket.byteCount })
        var decoder = E4BVPDeltaDecoder()
        let wave = bvp.flatMap { decoder.decode($0) }
        #expect((wave.max() ?? 0) - (wave.min() ?? 0) > 50, "a pulse of about 100 counts")

        for value in link.values(of: Self.accelerometer) {
            #expect(value.count == E4AccelerometerPacket.byteCount)
            for sample in try E4AccelerometerPacket.decode(value).samples {
                let g = sample.gravities
                let magnitude = (g.x * g.x + g.y * g.y + g.z * g.z).squareRoot()
                #expect(abs(magnitude - 1) < 0.08, "a resting wrist reads 1 g: \(magnitude)")
                #expect(g.z < -0.7, "the band lies on the back of the wrist: \(g.z)")
            }
        }

        let eda = try link.values(of: Self.eda).map { try E4EDAPacket.decode($0) }
        #expect(eda.map(\.counter) == (0..<eda.count).map { UInt16($0) }, "one more per packet, from 0")
        for microsiemens in eda.flatMap(\.microsiemens) {
            let value = try #require(microsiemens)
            #expect(value > 1.2 && value < 3.5, "around the default 2 µS: \(value)")
        }

        let temperatures = try link.values(of: Self.temperature).flatMap { try E4TemperaturePacket.decode($0).celsius }
        #expect(temperatures.allSatisfy { abs($0 - 33) < 1.5 }, "\(temperatures)")

        let battery = try link.values(of: Self.battery).map { try E4BatteryLevel.decode($0).percent }
        #expect(battery.first == 80, "the level is notified when streaming starts")
    }

    @Test("rates: each packet interval is samples per packet over the SDK rate; a span holds one packet per interval")
    func rates() async throws {
        #expect(E4Stream.bvp.packetInterval == .nanoseconds(171_875_000))
        #expect(E4Stream.accelerometer.packetInterval == .nanoseconds(187_500_000))
        #expect(E4Stream.eda.packetInterval == .milliseconds(1500))
        #expect(E4Stream.temperature.packetInterval == .seconds(1))
        for stream in E4Stream.allCases {
            let perSecond = Double(stream.samplesPerSecond) / Double(stream.samplesPerPacket)
            let interval = stream.packetInterval.components
            #expect(abs(perSecond * (Double(interval.seconds) + Double(interval.attoseconds) / 1e18) - 1) < 1e-12)
        }

        // The device's own sample counts: every packet advances its stream by exactly its samples per packet.
        var source = E4SignalSource(settings: E4SimulationSettings(), startUnixSeconds: Self.start, seed: 3)
        for packet in 1...40 {
            for stream in E4Stream.allCases {
                let bytes = source.nextPacket(stream)
                #expect(source.samples(of: stream) == Int64(packet * stream.samplesPerPacket), "\(stream)")
                #expect(!bytes.isEmpty)
            }
        }
        #expect(source.unixSeconds(ofSample: 64, in: .bvp) == Double(Self.start) + 1)
        #expect(source.unixSeconds(ofSample: 6, in: .eda) == Double(Self.start) + 1.5)

        // On the air: N intervals after the command, N packets of each stream have arrived, never more.
        let device = try band()
        let (link, task) = try await connect(device)
        defer { task.cancel() }
        try await start(device)
        for elapsed in [Duration.milliseconds(1500), .seconds(3), .milliseconds(4700)] {
            await clock.advance(by: elapsed - clock.elapsed, timers: Self.streamingTimers)
            let counts = Self.sensors.map { link.values(of: $0).count }
            #expect(counts == [E4Stream.bvp, .accelerometer, .temperature, .eda].map { Self.packets($0, in: elapsed) },
                    "after \(elapsed)")
        }
        let edaCounters = try link.values(of: Self.eda).map { try E4EDAPacket.decode($0).counter }
        #expect(edaCounters == (0..<edaCounters.count).map { UInt16($0) })
    }

    @Test("the EDA counter adds one per packet and wraps at 65 536")
    func edaCounter() throws {
        var source = E4SignalSource(settings: E4SimulationSettings(), startUnixSeconds: Self.start, seed: 5)
        var clock = E4SampleClock(startUnixMilliseconds: Int64(Self.start) * 1000, stream: .eda)
        var counters: [UInt16] = []
        for _ in 0..<100 {
            let packet = try E4EDAPacket.decode(source.nextPacket(.eda))
            counters.append(packet.counter)
            _ = clock.timestamps(ofPacketWithCounter: packet.counter)
        }
        #expect(counters == (0..<100).map { UInt16($0) })
        #expect(clock.lostPackets == 0 && clock.counterDiscontinuities == 0)
        #expect(source.edaCounter == 100)
        var wrapping: UInt16 = 65_535
        wrapping &+= 1
        #expect(wrapping == 0, "the counter is stepped with &+=")
    }

    // MARK: The heart

    @Test("BVP through the wire and the beat detector gives heart rates within 3 bpm of the true rate, each and per 30 s median",
          arguments: [
              ([:], 11), (["bpm": .int(95), "bpm_variation": .int(20), "bpm_period_s": .int(240), "motion": .string("walk"),
                           "ppg_noise": .double(0.1)], 12),
              (["bpm": .int(52), "bpm_variation": .int(5), "bpm_period_s": .int(60)], 13),
              (["bpm": .int(150), "bpm_variation": .int(0)], 14),
          ] as [([String: SimulationOptionValue], UInt64)])
    func heartRateThroughTheWire(options: [String: SimulationOptionValue], seed: UInt64) throws {
        var reader = SimulationOptionReader(options)
        let settings = try E4SimulationSettings(reading: &reader)
        var source = E4SignalSource(settings: settings, startUnixSeconds: Self.start, seed: seed)
        var decoder = E4BVPDeltaDecoder()
        var clock = E4SampleClock(startUnixMilliseconds: Int64(Self.start) * 1000, stream: .bvp)
        var detector = PulseBeatDetector()
        var events: [BeatEvent] = []
        for _ in 0..<(120 * 64 / E4BVPPacket.samplesPerPacket) {
            let packet = try E4BVPPacket.decode(source.nextPacket(.bvp))
            for (value, time) in zip(decoder.decode(packet), clock.timestamps()) {
                events += detector.process(sample: value, timestamp: time)
            }
        }
        let trueBeats = source.takeTrueBeats()
        let expected = trueBeats.filter { $0 >= Double(Self.start) + 20 }.count
        #expect(events.count >= expected * 8 / 10, "found \(events.count) of \(expected)")
        var worst = 0.0
        var medianErrors: [Double] = []
        for window in stride(from: 20.0, to: 110, by: 30) {
            let inside = events.filter {
                let seconds = Double($0.timestamp) / 1000 - Double(Self.start)
                return seconds >= window && seconds < window + 30
            }
            let truths = try inside.map {
                try SimulatedEmpaticaE4.trueHeartRate(atUnixSeconds: Double($0.timestamp) / 1000, options: options)
            }
            medianErrors.append(abs(median(inside.map(\.heartRate)) - median(truths)))
        }
        for event in events {
            let truth = try SimulatedEmpaticaE4.trueHeartRate(atUnixSeconds: Double(event.timestamp) / 1000, options: options)
            worst = max(worst, abs(event.heartRate - truth))
        }
        #expect(worst <= 3, "heart rate up to \(worst) bpm from the truth")
        #expect(medianErrors.allSatisfy { $0 <= 3 }, "30 s medians differ by \(medianErrors) bpm")
    }

    @Test("the generated beats follow the true rate: 60 / the median interval of each 10 s is within 2 bpm of it")
    func beatsFollowTheWave() {
        let settings = E4SimulationSettings(heartRate: E4HeartRateWave(restingBPM: 80, variation: 15, periodSeconds: 240))
        var source = E4SignalSource(settings: settings, startUnixSeconds: Self.start, seed: 9)
        for _ in 0..<(240 * 64 / 11) { _ = source.nextPacket(.bvp) }
        let beats = source.takeTrueBeats()
        #expect(source.takeTrueBeats().isEmpty, "taken once")
        var window = Double(Self.start)
        var checked = 0
        while window + 10 <= beats.last ?? 0 {
            let inside = beats.filter { $0 >= window && $0 < window + 10 }
            let intervals = zip(inside, inside.dropFirst()).map { $1 - $0 }
            let measured = 60 / median(intervals)
            let truth = settings.heartRate.bpm(atUnixSeconds: window + 5)
            #expect(abs(measured - truth) < 2, "at \(window - Double(Self.start)) s: \(measured) vs \(truth)")
            window += 10
            checked += 1
        }
        #expect(checked >= 20)
    }

    @Test("when the pulse generator restarts (every 24 h; here every 40 s) the beats carry on at the true rate")
    func pulseSegments() throws {
        let settings = E4SimulationSettings(heartRate: E4HeartRateWave(restingBPM: 70, variation: 10, periodSeconds: 200))
        var source = E4SignalSource(settings: settings, startUnixSeconds: Self.start, seed: 21, segmentSeconds: 40)
        var decoder = E4BVPDeltaDecoder()
        var clock = E4SampleClock(startUnixMilliseconds: Int64(Self.start) * 1000, stream: .bvp)
        var detector = PulseBeatDetector()
        var events: [BeatEvent] = []
        for _ in 0..<(160 * 64 / 11) {
            let packet = try E4BVPPacket.decode(source.nextPacket(.bvp))
            for (value, time) in zip(decoder.decode(packet), clock.timestamps()) {
                events += detector.process(sample: value, timestamp: time)
            }
        }
        let beats = source.takeTrueBeats()
        let gaps = zip(beats, beats.dropFirst()).map { $1 - $0 }
        #expect(gaps.allSatisfy { $0 > 0.3 && $0 < 1.6 }, "no pause and no pile-up at the restarts")
        #expect(beats.contains { $0 > Double(Self.start) + 150 })
        for segmentStart in [40.0, 80, 120] {
            let after = events.filter {
                let seconds = Double($0.timestamp) / 1000 - Double(Self.start)
                return seconds > segmentStart + 10 && seconds < segmentStart + 40
            }
            #expect(!after.isEmpty, "beats found again after the restart at \(segmentStart) s")
            for event in after {
                let truth = settings.heartRate.bpm(atUnixSeconds: Double(event.timestamp) / 1000)
                #expect(abs(event.heartRate - truth) <= 3)
            }
        }
    }

    @Test("the heart-rate wave is the documented triangle, and the PPG's schedule is exactly that wave")
    func heartRateWave() {
        let wave = E4HeartRateWave(restingBPM: 70, variation: 10, periodSeconds: 300)
        #expect(wave.bpm(atUnixSeconds: 0) == 70)
        #expect(wave.bpm(atUnixSeconds: 75) == 80)
        #expect(wave.bpm(atUnixSeconds: 150) == 70)
        #expect(wave.bpm(atUnixSeconds: 225) == 60)
        #expect(wave.bpm(atUnixSeconds: 300 * 6_000_000 + 37.5) == 75)
        for start in [Double(Self.start), 1_795_298_700.25, 0, 74.9] {
            let schedule = wave.schedule(fromUnixSeconds: start, duration: 1000)
            for step in 0...2000 {
                let offset = Double(step) / 2
                #expect(abs(schedule.bpm(at: offset) - wave.bpm(atUnixSeconds: start + offset)) < 1e-6, "\(start) + \(offset)")
            }
            #expect(schedule.points.count <= 2 + 7, "corners only")
        }
        let flat = E4HeartRateWave(restingBPM: 64, variation: 0, periodSeconds: 300).schedule(fromUnixSeconds: 5, duration: 900)
        #expect(flat.points.map(\.bpm) == [64, 64])
    }

    @Test("trueHeartRate(atUnixSeconds:options:) follows the options and ignores the device's other options")
    func trueHeartRateFunction() throws {
        #expect(try SimulatedEmpaticaE4.trueHeartRate(atUnixSeconds: 75, options: [:]) == 80)
        let options: [String: SimulationOptionValue] = ["bpm": .int(60), "bpm_variation": .double(4),
                                                        "bpm_period_s": .int(100), "serial": .string("A01234")]
        #expect(try SimulatedEmpaticaE4.trueHeartRate(atUnixSeconds: 1_000_075, options: options) == 56)
        #expect(throws: SimulatedDeviceConfigurationError.self) {
            try SimulatedEmpaticaE4.trueHeartRate(atUnixSeconds: 0, options: ["bpm": .int(10)])
        }
    }

    @Test("the true heart rate is logged with the serial, at the BVP's own time")
    func truthIsLogged() async throws {
        let log = CapturedLog()
        let logger = Logger(label: "test") { _ in CapturingLogHandler(log: log) }
        let device = try SimulatedEmpaticaE4(clocked(seed: 7, options: ["serial": .string("A0E4E4")], clock: clock),
                                             logger: logger, truthLogSeconds: 0.5)
        let (_, task) = try await connect(device)
        defer { task.cancel() }
        try await start(device)
        // BVP through 1.36 s of samples: the truth at 0.5 s and at 1 s.
        await clock.advance(by: .milliseconds(1500), timers: Self.streamingTimers)
        #expect(log.lines.count == 2)
        for (message, metadata) in log.lines.prefix(2) {
            let time = try #require(metadata["unix_time"].flatMap { Double($0.description) })
            let truth = try SimulatedEmpaticaE4.trueHeartRate(atUnixSeconds: time, options: [:])
            #expect(message == "empatica_e4 A0E4E4 true heart rate \((truth * 10).rounded() / 10) bpm")
            #expect(time > Double(Self.start) && time < Double(Self.start) + 2)
        }
    }

    // MARK: Motion and skin

    @Test("the accelerometer: a resting wrist reads 1 g with one-count flicker; a walking one swings")
    func motion() {
        func magnitudes(_ activity: E4WristActivity, seconds: Int) -> [Double] {
            var source = E4SignalSource(settings: E4SimulationSettings(activity: activity), startUnixSeconds: Self.start, seed: 4)
            return (0..<(seconds * 32 / 6)).flatMap { _ -> [Double] in
                guard let packet = try? E4AccelerometerPacket.decode(source.nextPacket(.accelerometer)) else { return [] }
                return packet.samples.map { sample in
                    let g = sample.gravities
                    return (g.x * g.x + g.y * g.y + g.z * g.z).squareRoot()
                }
            }
        }
        let rest = magnitudes(.rest, seconds: 300)
        #expect(rest.count == 300 * 32 / 6 * 6)
        #expect(rest.allSatisfy { abs($0 - 1) < 0.08 }, "\(rest.min() ?? 0)…\(rest.max() ?? 0)")
        let walk = magnitudes(.walk, seconds: 60)
        #expect((walk.max() ?? 0) - (walk.min() ?? 0) > 0.5, "\(walk.min() ?? 0)…\(walk.max() ?? 0)")
        #expect(walk.allSatisfy { $0 > 0.4 && $0 < 1.8 }, "\(walk.min() ?? 0)…\(walk.max() ?? 0)")
        #expect(abs(median(walk) - 1) < 0.2, "\(median(walk))")
    }

    @Test("skin conductance stays around its level with responses; skin temperature within a degree and a half")
    func skin() throws {
        let settings = E4SimulationSettings(skinConductance: 5, skinTemperature: 31.5)
        var source = E4SignalSource(settings: settings, startUnixSeconds: Self.start, seed: 8)
        var conductance: [Double] = []
        var temperature: [Double] = []
        for _ in 0..<(600 * 4 / 6) {
            conductance += try E4EDAPacket.decode(source.nextPacket(.eda)).microsiemens.compactMap { $0 }
        }
        for _ in 0..<600 {
            temperature += try E4TemperaturePacket.decode(source.nextPacket(.temperature)).celsius
        }
        #expect(conductance.count == 2400)
        #expect(conductance.allSatisfy { $0 > 3 && $0 < 8 }, "\(conductance.min() ?? 0)…\(conductance.max() ?? 0)")
        let rises = zip(conductance, conductance.dropFirst()).filter { $1 - $0 > 0.03 }.count
        #expect(rises > 10, "responses rise faster than the tonic level moves")
        #expect(temperature.allSatisfy { abs($0 - 31.5) <= 1.52 }, "\(temperature.min() ?? 0)…\(temperature.max() ?? 0)")
        #expect((temperature.max() ?? 0) - (temperature.min() ?? 0) > 0.05, "it varies")
    }

    @Test("the same seed and start give the same bytes")
    func deterministic() {
        var first = E4SignalSource(settings: E4SimulationSettings(), startUnixSeconds: Self.start, seed: 77)
        var second = E4SignalSource(settings: E4SimulationSettings(), startUnixSeconds: Self.start, seed: 77)
        var other = E4SignalSource(settings: E4SimulationSettings(), startUnixSeconds: Self.start, seed: 78)
        var differs = false
        for _ in 0..<50 {
            for stream in E4Stream.allCases {
                let bytes = first.nextPacket(stream)
                #expect(bytes == second.nextPacket(stream))
                if bytes != other.nextPacket(stream) { differs = true }
            }
        }
        #expect(differs)
    }

    // MARK: The tag button

    @Test("button_press notifies the modeled tag 0x3EB4 with the press time while streaming, nothing before")
    func tagButton() async throws {
        let device = try band()
        let (link, task) = try await connect(device)
        defer { task.cancel() }
        #expect(await device.handle(.buttonPress, link: link))
        #expect(link.values(of: Self.tag).isEmpty, "no start command yet: the band has nowhere to send it")

        let now = UInt32(1_795_300_000)
        try await start(device, at: now)
        await clock.advance(by: .milliseconds(250), timers: Self.streamingTimers)
        #expect(await device.handle(.buttonPress, link: link))
        let values = link.values(of: Self.tag)
        try #require(values.count == 1)
        let press = try E4TagPress.decode(values[0])
        #expect(press.unixMilliseconds == Int64(now) * 1000 + 250, "the press time on the session's clock")
        #expect(await device.handle(.findMyPhone, link: link) == false)
        #expect(await device.handle(.spotCheck, link: link) == false)
        #expect(await device.handle(.buttonPress, link: nil), "the band has a button even without a central")
    }

    @Test("E4TagPress: five bytes, seconds LE then 1/256 s; round trip within 4 ms; other lengths refused")
    func tagCodec() throws {
        let press = try E4TagPress(unixMilliseconds: 1_795_298_704_500)
        #expect(press.encode() == [0x90, 0x15, 0x02, 0x6B, 0x80])
        #expect(press.unixMilliseconds == 1_795_298_704_500)
        for milliseconds: Int64 in [0, 1, 999, 1_795_298_704_123, 4_294_967_295_999] {
            let decoded = try E4TagPress.decode(try E4TagPress(unixMilliseconds: milliseconds).encode())
            #expect(abs(decoded.unixMilliseconds - milliseconds) <= 4, "\(milliseconds)")
        }
        #expect(throws: GATTCodecError.self) { try E4TagPress(unixMilliseconds: -1) }
        #expect(throws: GATTCodecError.self) { try E4TagPress(unixMilliseconds: 4_294_967_296_000) }
        for length in 0..<5 {
            #expect(throws: GATTCodecError.self) { try E4TagPress.decode(Array(press.encode().prefix(length))) }
        }
        #expect(throws: GATTCodecError.outOfRange(field: "E4 tag length", value: 6)) {
            try E4TagPress.decode(press.encode() + [0])
        }
    }

    // MARK: Options

    @Test("options: unknown keys, bad values and a heart rate swinging out of 30…220 name the key")
    func options() throws {
        func refused(_ options: [String: SimulationOptionValue]) -> String? {
            do {
                _ = try band(options)
                return nil
            } catch let error as SimulatedDeviceConfigurationError {
                return error.key
            } catch {
                return "\(error)"
            }
        }
        #expect(refused(["rate_hz": .int(4)]) == "rate_hz")
        #expect(refused(["motion": .string("run")]) == "motion")
        #expect(refused(["bpm": .int(250)]) == "bpm")
        #expect(refused(["bpm": .int(35), "bpm_variation": .int(10)]) == "bpm_variation")
        #expect(refused(["bpm": .int(200), "bpm_variation": .int(30)]) == "bpm_variation")
        #expect(refused(["bpm_period_s": .int(30)]) == "bpm_period_s")
        #expect(refused(["eda_us": .int(0)]) == "eda_us")
        #expect(refused(["skin_temperature_c": .string("warm")]) == "skin_temperature_c")
        #expect(refused(["ppg_noise": .double(2)]) == "ppg_noise")
        #expect(refused(["bpm": .int(60), "bpm_variation": .int(0), "bpm_period_s": .int(60), "motion": .string("walk"),
                         "ppg_noise": .int(0), "eda_us": .double(0.5), "skin_temperature_c": .int(34), "battery": .int(5),
                         "battery_drain_per_hour": .int(2), "manufacturer": .string("x"), "model": .string("y"),
                         "serial": .string("A0FFFF"), "hardware": .string("h"), "firmware": .string("f"),
                         "software": .string("s")]) == nil)
    }
}

// MARK: Helpers


private func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Log lines as the band wrote them: message and metadata.
private final class CapturedLog: Sendable {
    private let storage = Mutex<[(String, Logger.Metadata)]>([])
    var lines: [(String, Logger.Metadata)] { storage.withLock { $0 } }
    func append(_ message: String, _ metadata: Logger.Metadata) { storage.withLock { $0.append((message, metadata)) } }
}

private struct CapturingLogHandler: LogHandler {
    let log: CapturedLog
    var metadataProvider: Logger.MetadataProvider?
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        log.append(event.message.description, metadata.merging(event.metadata ?? [:]) { $1 })
    }
}
