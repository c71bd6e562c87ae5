import Foundation
import Synchronization
import Testing
import Wear2MQTTTesting

@testable import SimulatedWearables
@testable import Wearables

/// The simulated Polar H10 and Verity Sense driven directly, with a link that records what they push, on a manual
/// clock; every value is read back through the Polar codecs the driver uses.
@Suite("Simulated Polar sensors")
struct SimulatedPolarSensorTests {
    static let controlPoint = SimulatedPolarSensor.controlPointUUID
    static let data = SimulatedPolarSensor.dataUUID

    /// The clock the sensors of a test run on.
    let clock = ManualClock()

    func sensor(_ kind: String, _ options: [String: SimulationOptionValue] = [:]) throws -> any SimulatedPeripheral {
        try #require(SimulatedDeviceCatalog.kind(named: kind)).make(clocked(seed: 0x2034_6EAB, options: options, clock: clock))
    }

    /// Writes `request`, then returns the response the device indicates for it `responseDelay` later.
    func exchange(_ device: any SimulatedPeripheral, _ link: RecordingPeripheralLink,
                  _ request: PMDControlPointRequest) async throws -> PMDControlPointResponse {
        let before = link.values(of: Self.controlPoint).count
        let running = clock.sleeperCount
        try await device.write(Self.controlPoint, value: try request.encode(), kind: .request)
        try #require(await clock.sleepers(atLeast: running + 1), "the response is under way")
        await clock.advance(by: SimulatedPolarSensor.responseDelay, timers: running)
        try #require(await link.until { link.values(of: Self.controlPoint).count > before })
        return try PMDControlPointResponse.decode(link.values(of: Self.controlPoint)[before])
    }

    /// Runs the device on `link` until the test ends; returns once it is connected and its frame tick armed.
    func connect(_ device: any SimulatedPeripheral, _ link: RecordingPeripheralLink) async throws -> Task<Void, Never> {
        try await run(device, on: link, clock: clock, timers: clock.sleeperCount + 1)
    }

    @Test("registered as polar_h10 / polar_verity_sense; advertised as the SDK's name rule wants; the driver claims them")
    func advertisementAndFeatures() async throws {
        let h10 = try sensor("polar_h10")
        #expect(h10.advertisement.localName == "Polar H10 20346EAB")
        #expect(PolarUUID.model(fromAdvertisedName: h10.deviceName) == "H10")
        #expect(try PMDFeatures.decode(await h10.read(Self.controlPoint)).supportedTypes == [.ecg, .acc])
        let sense = try sensor("polar_verity_sense")
        #expect(PolarUUID.model(fromAdvertisedName: sense.deviceName) == "Sense")
        #expect(try PMDFeatures.decode(await sense.read(Self.controlPoint)).supportedTypes == [.ppg, .acc, .ppi, .gyroscope, .magnetometer])
        let flags = sense.services.flatMap(\.characteristics).first { $0.uuid == Self.controlPoint }?.flags
        #expect(flags == [.read, .write, .indicate])
        #expect(try DeviceInformationString.decode(await h10.read(BluetoothUUID(0x2A29))) == "Polar Electro Oy")
        #expect(throws: SimulatedDeviceConfigurationError.self) { try sensor("polar_h10", ["start_error_sensor": .string("ppg2")]) }
    }

    @Test("settings, start and stop on the control point; the H10's ECG at 130 Hz and ACC at 200 Hz with no sample skipped")
    func h10Streams() async throws {
        let h10 = try sensor("polar_h10")
        let link = RecordingPeripheralLink(mtu: 232)
        let run = try await connect(h10, link)
        defer { run.cancel() }
        let settings = try await exchange(h10, link, .getSettings(.acc))
        #expect(settings.isSuccess)
        #expect(try PMDSettings.decode(settings.parameters).values == [.sampleRate: [25, 50, 100, 200], .resolution: [16], .range: [2, 4, 8]])
        #expect(try await exchange(h10, link, .getSettings(.ppg)).status == .invalidMeasurementType)
        #expect(try await exchange(h10, link, .start(.acc, settings: [.sampleRate: 52])).status == .invalidSampleRate)
        #expect(try await exchange(h10, link, .start(.acc, settings: [.sampleRate: 200, .range: 16])).status == .invalidRange)
        #expect(try await exchange(h10, link, .start(.ecg, settings: [.sampleRate: 130, .resolution: 14])).isSuccess)
        #expect(try await exchange(h10, link, .start(.acc, settings: [.sampleRate: 200, .resolution: 16, .range: 8])).isSuccess)
        #expect(try await exchange(h10, link, .start(.ecg, settings: [.sampleRate: 130])).status == .alreadyInState)

        await clock.advance(by: .seconds(2), timers: 1)
        #expect(link.values(of: Self.data).count > 40)
        #expect(try await exchange(h10, link, .stop(.ecg)).isSuccess)
        #expect(try await exchange(h10, link, .stop(.ecg)).status == .alreadyInState)
        let frames = try link.values(of: Self.data).map(PMDDataFrame.decode)
        #expect(link.values(of: Self.data).allSatisfy { $0.count <= 229 })
        let ecg = frames.filter { $0.measurementType == .ecg }
        let acc = frames.filter { $0.measurementType == .acc }
        #expect(ecg.allSatisfy { $0.frameType == 0 && !$0.isCompressed } && acc.allSatisfy { $0.frameType == 1 && !$0.isCompressed })
        // Each frame's samples are exactly the samples the time since the previous frame holds at the rate.
        for (stream, rate) in [(ecg, 130.0), (acc, 200.0)] {
            for (previous, frame) in zip(stream, stream.dropFirst()) {
                let count = frame.measurementType == .ecg ? frame.content.count / 3 : frame.content.count / 6
                let expected = Double(frame.timestamp - previous.timestamp) / 1e9 * rate
                #expect(abs(Double(count) - expected) < 0.01, "\(count) samples for \(expected)")
            }
        }
        let values = try ecg.flatMap { frame -> [Int32] in
            guard case .microvolts(let samples) = try PMDECGData.decode(frame) else { return [] }
            return samples.map(\.microvolts)
        }
        #expect((values.max() ?? 0) > 900 && (values.min() ?? 0) < -100, "an R peak and an S wave")
    }

    @Test("the ECG's R peaks and the RR intervals come at the configured heart rate")
    func knownHeartRate() {
        var heart = PolarHeartSignal(meanBPM: 75, variation: 0.03, seed: 11)
        heart.extend(through: 60, keepingFrom: 0)
        let samples = (1...(60 * 130)).map { heart.ecgMicrovolts(at: Double($0) / 130) }
        var peaks: [Int] = []
        for index in 1..<(samples.count - 1) where samples[index] > 800 && samples[index] >= samples[index - 1] && samples[index] > samples[index + 1] {
            peaks.append(index)
        }
        let intervals = zip(peaks.dropFirst(), peaks).map { Double($0 - $1) / 130 }
        let meanBPM = 60 / (intervals.reduce(0, +) / Double(intervals.count))
        #expect(abs(meanBPM - 75) < 1.5, "\(meanBPM)")
        let beats = heart.beats(after: 0, through: 60)
        #expect(beats.allSatisfy { abs($0.interval - 0.8) <= 0.8 * 0.031 })
        #expect(abs(Double(beats.count) - 75) <= 2)
    }

    @Test("faults: a start answered with the configured status, and a link whose MTU is too small answered invalidMTU")
    func faults() async throws {
        let charging = try sensor("polar_h10", ["start_error": .int(13), "start_error_sensor": .string("ecg")])
        let link = RecordingPeripheralLink(mtu: 232)
        let run = try await connect(charging, link)
        defer { run.cancel() }
        let refused = try await exchange(charging, link, .start(.ecg, settings: [.sampleRate: 130]))
        #expect(refused.statusCode == 13 && refused.status == .deviceInCharger)
        #expect(try await exchange(charging, link, .start(.acc, settings: [.sampleRate: 25])).isSuccess)

        let small = try sensor("polar_h10", ["minimum_mtu": .int(100)])
        let smallLink = RecordingPeripheralLink(mtu: 23)
        let smallRun = try await connect(small, smallLink)
        defer { smallRun.cancel() }
        #expect(try await exchange(small, smallLink, .start(.ecg, settings: [.sampleRate: 130])).status == .invalidMTU)
    }

    @Test("the Verity Sense: compressed ACC, gyroscope and magnetometer, PPI at the heart's beats within a 23-byte MTU; PPG needs more")
    func veritySenseStreams() async throws {
        let sense = try sensor("polar_verity_sense", ["bpm": .int(90)])
        let link = RecordingPeripheralLink(mtu: 23)
        let run = try await connect(sense, link)
        defer { run.cancel() }
        let gyro = try await exchange(sense, link, .start(.gyroscope, settings: [.sampleRate: 52, .range: 2000]))
        let factor = try #require(try PMDSettings.decode(gyro.parameters).factor)
        #expect(abs(factor - 2000.0 / 32768) < 1e-6)
        // One compressed PPG sample (4 channels of 24 bits) and the header are 22 bytes: more than a 23-byte MTU carries.
        #expect(try await exchange(sense, link, .start(.ppg, settings: [.sampleRate: 55])).status == .invalidMTU)
        for (type, settings) in [(PMDMeasurementType.acc, PMDSettingSelection([.sampleRate: 52])),
                                 (.magnetometer, [.sampleRate: 100]), (.ppi, [:])] {
            #expect(try await exchange(sense, link, .start(type, settings: settings)).isSuccess, "\(type)")
        }
        // 90 bpm: a beat every 0.67 s, so three seconds hold PPI frames.
        await clock.advance(by: .seconds(3), timers: 1)
        #expect(try link.values(of: Self.data).map(PMDDataFrame.decode).contains { $0.measurementType == .ppi })
        #expect(link.values(of: Self.data).allSatisfy { $0.count <= 20 })
        let frames = try link.values(of: Self.data).map(PMDDataFrame.decode)
        for frame in frames {
            switch frame.measurementType {
            case .ppg:
                let samples = try PMDPPGData.decode(frame)
                #expect(frame.isCompressed && frame.frameType == 0 && !samples.isEmpty)
            case .acc:
                let samples = try PMDAccelerationData.decode(frame)
                #expect(frame.isCompressed && samples.allSatisfy { (-1400 ... -600).contains($0.z) }, "gravity and steps on z")
            case .gyroscope: #expect(try PMDGyroscopeData.decode(frame, factor: factor).allSatisfy { abs($0.x) <= 26 })
            case .magnetometer: #expect(try PMDMagnetometerData.decode(frame, factor: 0.001).allSatisfy { abs($0.z + 0.45) < 0.01 })
            case .ppi:
                for sample in try PMDPPIData.decode(frame) {
                    #expect(abs(Double(sample.intervalMilliseconds) - 666.7) < 25 && sample.skinContact && !sample.blocker)
                }
            default: Issue.record("unexpected frame \(frame)")
            }
        }
        // Taken off: every stream stops and the control point says so.
        #expect(await sense.handle(.buttonPress, link: link))
        let notice = try PMDControlPointNotice.decode(try #require(link.values(of: Self.controlPoint).last))
        #expect(notice == .measurementsStopped([2, 3, 5, 6]))
        #expect(await (sense as! SimulatedPolarSensor).runningTypes.isEmpty)
    }

    @Test("a settings response longer than the MTU goes out in parts with more set; joined, they are the whole list")
    func multiPartResponses() throws {
        let whole = PMDControlPointResponse(opCode: 1, measurementTypeByte: 5, statusCode: 0, parameters: try PolarSimulatedModel.veritySense
            .streams[.gyroscope]!.settings.encode()).encode()
        #expect(whole.count > 20)
        let parts = PolarPMDEngine.parts(of: whole, mtu: 23)
        #expect(parts.count == 2 && parts.allSatisfy { $0.count <= 20 })
        var assembler = PMDResponseAssembler()
        #expect(try assembler.receive(parts[0]) == .incomplete)
        guard case .response(let joined) = try assembler.receive(parts[1]) else {
            Issue.record("not joined")
            return
        }
        #expect(try PMDSettings.decode(joined.parameters)[.range] == [250, 500, 1000, 2000])
        #expect(PolarPMDEngine.parts(of: whole, mtu: 247) == [whole])
        let error = PMDControlPointResponse(opCode: 2, measurementTypeByte: 1, statusCode: 10, moreByte: nil).encode()
        #expect(PolarPMDEngine.parts(of: error, mtu: 23) == [error])
    }
}
