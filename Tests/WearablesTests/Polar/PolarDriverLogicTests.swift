@testable import BlueZ
import DBus
import Testing
@testable import Wearables

/// The pure parts of the `polar` driver: the configure request checked against a device's own settings, the
/// control point's multi-part responses and stop notices, frames turned into timed samples, status → error.
@Suite("Polar driver logic")
struct PolarDriverLogicTests {
    static let h10: [PolarStream: PMDSettings] = [
        .ecg: PMDSettings(values: [.sampleRate: [130], .resolution: [14]]),
        .accelerometer: PMDSettings(values: [.sampleRate: [25, 50, 100, 200], .resolution: [16], .range: [2, 4, 8]]),
    ]

    func error(_ request: [String: DeviceValue], _ start: PolarStreamConfiguration = .init()) -> CommandError? {
        do throws(CommandError) {
            _ = try start.applying(request, offered: Self.h10)
            return nil
        } catch { return error }
    }

    @Test("a stream named is enabled with the largest offered settings unless given; enabled false stops it; others keep theirs")
    func configurationDefaultsAndChanges() throws {
        let first = try PolarStreamConfiguration().applying(
            ["sensors": ["ecg": [:], "accelerometer": ["rate_hz": 50, "range": 4]]], offered: Self.h10)
        #expect(first.enabled[.ecg] == [.sampleRate: 130, .resolution: 14])
        #expect(first.enabled[.accelerometer] == [.sampleRate: 50, .resolution: 16, .range: 4])
        // Changing only the rate keeps the range chosen before.
        let second = try first.applying(["sensors": ["accelerometer": ["rate_hz": 200]]], offered: Self.h10)
        #expect(second.enabled[.accelerometer] == [.sampleRate: 200, .resolution: 16, .range: 4])
        #expect(second.enabled[.ecg] == first.enabled[.ecg])
        let third = try second.applying(["sensors": ["ecg": ["enabled": false]]], offered: Self.h10)
        #expect(third.enabled[.ecg] == nil && third.enabled[.accelerometer] != nil)
        #expect(PolarStreamConfiguration.describe(third.enabled[.accelerometer])
            == ["enabled": true, "rate_hz": 200, "resolution": 16, "range": 4])
        #expect(PolarStreamConfiguration.describe(nil) == ["enabled": false])
    }

    @Test("refusals name the field and what the device offers")
    func configurationRefusals() {
        let cases: [([String: DeviceValue], String)] = [
            (["sensors": ["accelerometer": ["rate_hz": 52]]], "sensors.accelerometer.rate_hz must be one of 25, 50, 100 or 200 Hz"),
            (["sensors": ["accelerometer": ["range": 16]]], "sensors.accelerometer.range must be one of 2, 4 or 8"),
            (["sensors": ["ecg": ["rate_hz": 130.5]]], "sensors.ecg.rate_hz must be an integer"),
            (["sensors": ["ecg": ["range": 2]]], "sensors.ecg.range: this stream has no range setting"),
            (["sensors": ["ppg": [:]]], "sensors.ppg: this device does not offer ppg; it offers ecg and accelerometer"),
            (["sensors": ["heart_rate": [:]]], "sensors.heart_rate is not a Polar stream"),
            (["sensors": ["ecg": ["enabled": "yes"]]], "sensors.ecg.enabled must be true or false"),
            (["sensors": ["ecg": ["speed": 1]]], "unknown field \"sensors.ecg.speed\""),
            (["sensors": ["ecg": true]], "sensors.ecg must be a JSON object"),
            (["ecg": ["enabled": true]], "unknown field \"ecg\""),
            ([:], "sensors is required"),
        ]
        for (request, message) in cases {
            let refused = error(request)
            #expect(refused?.code == .invalidValue, "\(request)")
            #expect(refused?.message.hasPrefix(message) == true, "\(request): \(String(describing: refused))")
        }
    }

    @Test("a response with more set waits for the rest; the stop notice names its types; parts of another op start afresh")
    func responseAssembly() throws {
        var assembler = PMDResponseAssembler()
        let first = PMDControlPointResponse(opCode: 1, measurementTypeByte: 2, statusCode: 0, moreByte: 1, parameters: [0, 1, 0x19, 0])
        let last = PMDControlPointResponse(opCode: 1, measurementTypeByte: 2, statusCode: 0, moreByte: 0, parameters: [2, 1, 8, 0])
        #expect(try assembler.receive(first.encode()) == .incomplete)
        guard case .response(let joined) = try assembler.receive(last.encode()) else {
            Issue.record("no response")
            return
        }
        #expect(joined.parameters == [0, 1, 0x19, 0, 2, 1, 8, 0])
        #expect(try PMDSettings.decode(joined.parameters).values == [.sampleRate: [25], .range: [8]])
        #expect(try assembler.receive([0x01, 0x00, 0x02, 0x3F]) == .stopped([.ecg, .acc]))
        let error = PMDControlPointResponse(opCode: 2, measurementTypeByte: 0, statusCode: 13, moreByte: nil)
        _ = try assembler.receive(first.encode())
        #expect(try assembler.receive(error.encode()) == .response(error))
        #expect(throws: GATTCodecError.self) { try assembler.receive([0x55]) }
    }

    @Test("every PMD status maps to a contract code with vendor_code = Polar's number")
    func statusMapping() {
        let expected: [UInt8: CommandError.Code] = [
            1: .notSupported, 2: .notSupported, 3: .notSupported, 4: .invalidValue, 5: .invalidValue, 6: .busy,
            7: .invalidValue, 8: .invalidValue, 9: .invalidValue, 10: .notSupported, 11: .invalidValue, 12: .busy,
            13: .busy, 14: .internalError, 200: .internalError,
        ]
        for (status, code) in expected {
            let error = CommandError(pmdStatus: status, request: "starting ecg")
            #expect(error.code == code && error.vendorCode == Int(status), "\(status)")
        }
        #expect(CommandError(pmdStatus: 13, request: "starting ecg").message == "the device refused starting ecg: device in charger")
    }

    @Test("frames become samples in the contract's units, spread back from each frame's time without gaps")
    func framesToSamples() throws {
        var decoder = PolarSampleDecoder()
        let second: UInt64 = 1_000_000_000
        let start: UInt64 = 800_000_000 * second
        #expect(throws: PolarSampleDecoder.Failure.self) {
            try decoder.decode(try PMDECGData.frame(microvolts: [1], timestamp: start).encode())
        }
        decoder.started(.ecg, sampleRate: 130, factor: nil)
        decoder.started(.acc, sampleRate: 200, factor: nil)
        // 13 ECG samples a frame, 100 ms apart: 130 Hz.
        var times: [Int64] = []
        for frame in 1...10 {
            let values = (0..<13).map { Int32(frame * 100 + $0) }
            let samples = try decoder.decode(try PMDECGData.frame(microvolts: values, timestamp: start + UInt64(frame) * second / 10).encode())
            #expect(samples.map(\.reading) == values.map { .ecg(microvolts: Int($0)) })
            times += samples.map(\.timestamp)
        }
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(gaps.allSatisfy { (7...8).contains($0) }, "\(gaps)")
        #expect(times.last == PMDSampleTiming.unixMilliseconds(fromPolarNanoseconds: start + second))

        let acc = try decoder.decode(try PMDAccelerationData.rawFrame([.init(x: 12, y: -1000, z: 250)], timestamp: start).encode())
        #expect(acc.first?.reading == .vector(x: 0.012, y: -1.0, z: 0.25, accuracy: nil))
        #expect(acc.first?.sensor == .accelerometer)

        decoder.started(.ppi, sampleRate: 0, factor: nil)
        let ppi = try decoder.decode(PMDPPIData.frame([
            .init(heartRate: 60, intervalMilliseconds: 1000, errorEstimateMilliseconds: 12, blocker: false, skinContact: true, skinContactSupported: true),
            .init(heartRate: 62, intervalMilliseconds: 968, errorEstimateMilliseconds: 30, blocker: true, skinContact: false, skinContactSupported: false),
        ], timestamp: start).encode())
        #expect(ppi.map(\.timestamp) == [PMDSampleTiming.unixMilliseconds(fromPolarNanoseconds: start) - 968,
                                         PMDSampleTiming.unixMilliseconds(fromPolarNanoseconds: start)])
        #expect(ppi.first?.reading == .pulseInterval(PulseInterval(milliseconds: 1000, errorEstimateMilliseconds: 12, heartRate: 60,
                                                                   blocker: false, skinContact: true)))
        // A blocked interval is published but carries no beat for heart-rate variability.
        #expect(ppi.first?.beatIntervals?.first == 1000)
        #expect(ppi.last?.beatIntervals == nil)
        if case .pulseInterval(let interval) = ppi.last?.reading { #expect(interval.skinContact == nil) }

        decoder.started(.magnetometer, sampleRate: 50, factor: 0.001)
        let content = try PMDDeltaCompression.encode([[500, -200, 0]], channels: 3, resolution: 16)
        let field = try decoder.decode(PMDDataFrame(.magnetometer, timestamp: start, frameType: 0, isCompressed: true, content: content).encode())
        guard case .vector(let x, let y, let z, _) = field.first?.reading else {
            Issue.record("no magnetometer sample")
            return
        }
        // 0.5 G = 50 µT.
        #expect(abs(x - 50) < 1e-3 && abs(y + 20) < 1e-3 && z == 0)
        decoder.stopped(.ecg)
        #expect(throws: PolarSampleDecoder.Failure.notStarted(0)) {
            try decoder.decode(try PMDECGData.frame(microvolts: [1], timestamp: start + 2 * second).encode())
        }
    }

    @Test("matched by the SDK's name rule or the PMD service; both make it certain")
    func matching() {
        func device(_ name: String?, _ services: [String]) -> Advertisement {
            var properties: [String: DBusValue] = ["UUIDs": .strings(services)]
            if let name { properties["Name"] = .string(name) }
            return Advertisement(path: "/org/bluez/hci0/dev_A0_9E_1A_00_00_01", properties: properties)
        }
        #expect(PolarDriver.match(device("Polar H10 20346EAB", ["0000180d-0000-1000-8000-00805f9b34fb"])) == .likely)
        #expect(PolarDriver.match(device("Polar Sense B36B4A2F", [PolarUUID.Service.measurementData])) == .certain)
        #expect(PolarDriver.match(device(nil, [PolarUUID.Service.measurementData.uppercased()])) == .likely)
        #expect(PolarDriver.match(device("Polar H10", [])) == nil)
        #expect(WearableDrivers.all.bestMatch(for: device("Polar H10 20346EAB", ["0000180d-0000-1000-8000-00805f9b34fb"])) == PolarDriver.self)
    }

    @Test("seeded random notifications: the decoder gives samples in time order or a typed failure, the assembler a value or an error")
    func randomNotifications() {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return seed >> 11
        }
        var decoder = PolarSampleDecoder()
        var assembler = PMDResponseAssembler()
        for type in [PMDMeasurementType.ecg, .ppg, .acc, .ppi, .gyroscope, .magnetometer] {
            decoder.started(type, sampleRate: [0, 1, 130, 200][Int(next() % 4)], factor: [nil, 1, 0.001, .nan][Int(next() % 4)])
        }
        var decoded = 0
        for index in 0..<20_000 {
            // Mostly a plausible header (a known type, a later timestamp, a frame type decoders know) and random content;
            // now and then a cut one.
            let timestamp = 800_000_000_000_000_000 + UInt64(index) * 10_000_000
            var bytes = [[0, 1, 2, 3, 5, 6][Int(next() % 6)]] + (0..<8).map { UInt8(truncatingIfNeeded: timestamp >> (8 * $0)) }
            bytes.append([0, 1, 2, 0x80, 0x81][Int(next() % 5)])
            bytes += (0..<Int(next() % 40)).map { _ in UInt8(truncatingIfNeeded: next()) }
            if next() % 10 == 0 { bytes = Array(bytes.prefix(Int(next() % 12))) }
            if let samples = try? decoder.decode(bytes) {
                decoded += samples.count
                let times = samples.map(\.timestamp)
                #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "\(bytes)")
            }
            _ = try? assembler.receive(bytes.isEmpty ? [] : [0xF0] + bytes.dropFirst())
        }
        #expect(decoded > 1000, "most random frames of a started type decode to something")
    }
}
