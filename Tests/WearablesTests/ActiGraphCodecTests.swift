import Testing

@testable import Wearables

/// The vendor service of docs/protocols/actigraph.md: identifiers, the status byte and every payload layout,
/// little-endian, byte vectors written out field by field from the doc's tables.
@Suite("ActiGraph vendor service codecs")
struct ActiGraphCodecTests {
    /// 07-21-2015 04:05:00 UTC (seed 004's epoch start), 1437451500 = 0x55ADC4EC.
    static let start: UInt32 = 1_437_451_500
    /// 07-21-2015 04:06:00 UTC, 1437451560 = 0x55ADC528.
    static let stop: UInt32 = 1_437_451_560

    @Test("the vendor service and its four characteristics are 8216000n-5e87-4ee6-91ed-1fe5f8a1f698, lower case")
    func uuids() {
        #expect(ActiGraphUUID.service == "82160001-5e87-4ee6-91ed-1fe5f8a1f698")
        #expect(ActiGraphUUID.control == "82160002-5e87-4ee6-91ed-1fe5f8a1f698")
        #expect(ActiGraphUUID.controlResponse == "82160003-5e87-4ee6-91ed-1fe5f8a1f698")
        #expect(ActiGraphUUID.rawStream == "82160004-5e87-4ee6-91ed-1fe5f8a1f698")
        #expect(ActiGraphUUID.imuStream == "82160005-5e87-4ee6-91ed-1fe5f8a1f698")
    }

    @Test("opcodes: STATUS 0x01, SET_STREAMS 0x10, EPOCH_OPEN 0x20, EPOCH_PAGE 0x21, EPOCH_ACK 0x22")
    func opcodes() {
        #expect(ActiGraphOpcode.allCases.map(\.rawValue) == [0x01, 0x10, 0x20, 0x21, 0x22])
        #expect(ActiGraphOpcode(rawValue: 0x02) == nil)
    }

    @Test("status 0x80 is success; otherwise the SDK code is status & 0x7F and maps per the doc's table")
    func statusByte() {
        #expect(ActiGraphStatus.ok.isOK)
        #expect(ActiGraphStatus.ok.commandError == nil)
        #expect(ActiGraphStatus(sdkCode: 8).rawValue == 0x88)
        let expected: [(UInt8, CommandError.Code, Int)] = [
            (0x81, .deviceNotFound, 1), (0x83, .invalidValue, 3), (0x85, .deviceDisconnected, 5),
            (0x86, .internalError, 6), (0x87, .internalError, 7), (0x88, .invalidValue, 8),
            (0x89, .notSupported, 9), (0x8A, .invalidValue, 10), (0x8B, .invalidValue, 11), (0x8C, .internalError, 12),
        ]
        for (raw, code, vendorCode) in expected {
            let status = ActiGraphStatus(rawValue: raw)
            #expect(!status.isOK)
            #expect(status.sdkCode == UInt8(vendorCode))
            #expect(status.commandError?.code == code, "status \(raw)")
            #expect(status.commandError?.vendorCode == vendorCode, "status \(raw)")
        }
        #expect(ActiGraphStatus(rawValue: 0x88).commandError?.message.contains("Date Format Error") == true)
        let withoutResponseBit = ActiGraphStatus(rawValue: 0x08).commandError
        #expect(withoutResponseBit?.code == .internalError)
        #expect(withoutResponseBit?.vendorCode == nil)
    }

    // MARK: Control payloads

    static let settingsBytes: [UInt8] = [
        0x01, // raw streaming
        0x64, // 100 Hz
        0x0A, // gyroscope | temperature
    ]
    static let settings = ActiGraphStreamSettings(rawStreaming: true, rawRateHz: 100, imu: [.gyroscope, .temperature])

    @Test("SET_STREAMS is raw streaming u8, raw rate u8 (30–100 Hz), IMU mask u8 (bits 0–3)")
    func streamSettings() throws {
        #expect(Self.settings.encoded() == Self.settingsBytes)
        #expect(try ActiGraphStreamSettings(decoding: Self.settingsBytes) == Self.settings)
        #expect(ActiGraphIMUMask.all.rawValue == 0x0F)
        #expect(ActiGraphIMUSensor.allCases.map { ActiGraphIMUMask($0).rawValue } == [0x01, 0x02, 0x04, 0x08])
        let slowest = ActiGraphStreamSettings(rawStreaming: false, rawRateHz: 30, imu: [.accelerometer, .magnetometer])
        #expect(slowest.encoded() == [0x00, 0x1E, 0x05])
        #expect(try ActiGraphStreamSettings(decoding: [0x00, 0x1E, 0x05]) == slowest)
        #expect(throws: GATTCodecError.outOfRange(field: "raw rate", value: 29)) { try ActiGraphStreamSettings(decoding: [0x01, 0x1D, 0x00]) }
        #expect(throws: GATTCodecError.outOfRange(field: "raw rate", value: 101)) { try ActiGraphStreamSettings(decoding: [0x01, 0x65, 0x00]) }
        #expect(throws: GATTCodecError.reservedValue(field: "IMU mask", value: 0x10)) { try ActiGraphStreamSettings(decoding: [0x01, 0x64, 0x10]) }
        #expect(throws: GATTCodecError.reservedValue(field: "raw streaming", value: 2)) { try ActiGraphStreamSettings(decoding: [0x02, 0x64, 0x00]) }
        expectWrongLengthsTruncated(Self.settingsBytes) { bytes throws(GATTCodecError) in _ = try ActiGraphStreamSettings(decoding: bytes) }
    }

    static let deviceStatusBytes: [UInt8] = [
        0x57, // battery 87 %
        0x01, // worn
        0x01, 0x64, 0x0A, // streaming at 100 Hz, gyroscope and temperature
        0xEC, 0xC4, 0xAD, 0x55, // first epoch 1437451500
        0x28, 0xC5, 0xAD, 0x55, // last epoch 1437451560
        0x02, 0x00, 0x00, 0x00, // 2 epochs
        0x50, 0xC5, 0xAD, 0x55, // device time 1437451600
    ]

    @Test("STATUS data: battery, wear, the three stream bytes, first/last epoch, epoch count, device time — 21 bytes")
    func deviceStatus() throws {
        let status = ActiGraphDeviceStatus(batteryPercent: 87, isWorn: true, streams: Self.settings, firstEpoch: Self.start,
                                           lastEpoch: Self.stop, epochCount: 2, deviceTime: 1_437_451_600)
        #expect(Self.deviceStatusBytes.count == ActiGraphDeviceStatus.length)
        #expect(status.encoded() == Self.deviceStatusBytes)
        #expect(try ActiGraphDeviceStatus(decoding: Self.deviceStatusBytes) == status)
        var overfull = Self.deviceStatusBytes
        overfull[0] = 101
        #expect(throws: GATTCodecError.outOfRange(field: "battery", value: 101)) { try ActiGraphDeviceStatus(decoding: overfull) }
        var unsure = Self.deviceStatusBytes
        unsure[1] = 2
        #expect(throws: GATTCodecError.reservedValue(field: "wear", value: 2)) { try ActiGraphDeviceStatus(decoding: unsure) }
        expectWrongLengthsTruncated(Self.deviceStatusBytes) { bytes throws(GATTCodecError) in _ = try ActiGraphDeviceStatus(decoding: bytes) }
    }

    @Test("EPOCH_OPEN asks start u32, stop u32 and is answered with epoch count u32, page count u16")
    func epochOpen() throws {
        let rangeBytes: [UInt8] = [0xEC, 0xC4, 0xAD, 0x55, 0x28, 0xC5, 0xAD, 0x55]
        let range = ActiGraphEpochRange(start: Self.start, stop: Self.stop)
        #expect(range.encoded() == rangeBytes)
        #expect(try ActiGraphEpochRange(decoding: rangeBytes) == range)
        expectWrongLengthsTruncated(rangeBytes) { bytes throws(GATTCodecError) in _ = try ActiGraphEpochRange(decoding: bytes) }

        let openedBytes: [UInt8] = [0x61, 0x00, 0x01, 0x00, 0x04, 0x00] // 65633 epochs, 4 pages
        let opened = ActiGraphEpochOpened(epochCount: 65_633, pageCount: 4)
        #expect(opened.encoded() == openedBytes)
        #expect(try ActiGraphEpochOpened(decoding: openedBytes) == opened)
        expectWrongLengthsTruncated(openedBytes) { bytes throws(GATTCodecError) in _ = try ActiGraphEpochOpened(decoding: bytes) }
    }

    // MARK: Epochs

    static let firstEpochBytes: [UInt8] = [
        0xEC, 0xC4, 0xAD, 0x55, // ts 1437451500
        0x14, 0x00, // x 20
        0x64, 0x00, // y 100
        0x1E, 0x00, // z 30
        0xD2, 0x04, // 1234 steps
        0x48, // 72 bpm
        0x01, // worn
    ]
    static let firstEpoch = ActiGraphEpochRecord(timestamp: start, xCounts: 20, yCounts: 100, zCounts: 30, steps: 1234,
                                                 heartRate: 72, isWorn: true)
    static let secondEpochBytes: [UInt8] = [
        0x28, 0xC5, 0xAD, 0x55, // ts 1437451560
        0x0A, 0x00, // x 10
        0x28, 0x00, // y 40
        0xC8, 0x00, // z 200
        0x00, 0x00, // no steps
        0x00, // no heart rate
        0x00, // not worn
    ]
    static let secondEpoch = ActiGraphEpochRecord(timestamp: stop, xCounts: 10, yCounts: 40, zCounts: 200, steps: 0,
                                                  heartRate: 0, isWorn: false)

    @Test("an epoch record is ts u32, x/y/z counts u16, steps u16, heart rate u8, wear u8 — 14 bytes (not the doc's miscounted 13); wear 2 is reserved")
    func epochRecord() throws {
        #expect(Self.firstEpochBytes.count == ActiGraphEpochRecord.length)
        #expect(Self.firstEpoch.encoded() == Self.firstEpochBytes)
        #expect(try ActiGraphEpochRecord(decoding: Self.firstEpochBytes) == Self.firstEpoch)
        #expect(Self.secondEpoch.encoded() == Self.secondEpochBytes)
        #expect(try ActiGraphEpochRecord(decoding: Self.secondEpochBytes) == Self.secondEpoch)
        var reserved = Self.firstEpochBytes
        reserved[13] = 0x02
        #expect(throws: GATTCodecError.reservedValue(field: "wear", value: 2)) { try ActiGraphEpochRecord(decoding: reserved) }
        expectWrongLengthsTruncated(Self.firstEpochBytes) { bytes throws(GATTCodecError) in _ = try ActiGraphEpochRecord(decoding: bytes) }
    }

    @Test("an EPOCH_PAGE answer is page u16, count u8, then count records; a count that disagrees is an error")
    func epochPage() throws {
        let bytes: [UInt8] = [0x03, 0x00, 0x02] + Self.firstEpochBytes + Self.secondEpochBytes
        let page = ActiGraphEpochPage(page: 3, records: [Self.firstEpoch, Self.secondEpoch])
        #expect(page.encoded() == bytes)
        #expect(try ActiGraphEpochPage(decoding: bytes) == page)
        #expect(try ActiGraphEpochPage(decoding: [0x00, 0x01, 0x00]) == ActiGraphEpochPage(page: 256, records: []))
        expectWrongLengthsTruncated(bytes) { bytes throws(GATTCodecError) in _ = try ActiGraphEpochPage(decoding: bytes) }

        // A count of 1 with two records' bytes: the second record is bytes the count does not account for.
        var countTooSmall = bytes
        countTooSmall[2] = 0x01
        #expect(throws: GATTCodecError.truncated(expected: 17, actual: 31)) { try ActiGraphEpochPage(decoding: countTooSmall) }
        var countTooLarge = bytes
        countTooLarge[2] = 0x03
        // Three records need 45 bytes; the first missing field, the third record's ts, ends at byte 35.
        #expect(throws: GATTCodecError.truncated(expected: 35, actual: 31)) { try ActiGraphEpochPage(decoding: countTooLarge) }
        #expect(throws: GATTCodecError.outOfRange(field: "epoch count", value: 61)) {
            try ActiGraphEpochPage(decoding: [0x03, 0x00, 61] + Array(repeating: Self.firstEpochBytes, count: 61).flatMap { $0 })
        }
        let full = ActiGraphEpochPage(page: 0, records: Array(repeating: Self.firstEpoch, count: 60))
        #expect(try ActiGraphEpochPage(decoding: full.encoded()) == full)
    }

    @Test("an epoch on fitness/epoch: id <serial>-epoch-<ts>, ms timestamp, counts, steps, heart_rate (null for none), wear")
    func epochFitnessRecord() {
        let first = Self.firstEpoch.fitnessRecord(serial: "TAS1D12345678")
        #expect(first == FitnessRecord(kind: "epoch", id: "TAS1D12345678-epoch-1437451500", timestamp: 1_437_451_500_000, fields: [
            "x_counts": 20, "y_counts": 100, "z_counts": 30, "steps": 1234, "heart_rate": 72, "wear": true,
        ]))
        let second = Self.secondEpoch.fitnessRecord(serial: "TAS1D12345678")
        #expect(second.id == "TAS1D12345678-epoch-1437451560")
        #expect(second.fields == ["x_counts": 10, "y_counts": 40, "z_counts": 200, "steps": 0, "heart_rate": .null, "wear": false])
    }

    // MARK: Streams

    static let rawBytes: [UInt8] = [
        0x34, 0x12, // sequence 0x1234
        0xEC, 0xC4, 0xAD, 0x55, // first sample at 1437451500 s
        0xF4, 0x01, // + 500 ms
        0x1E, // 30 Hz
        0x03, // 3 samples
        0x00, 0x00, 0x00, 0x10, 0x00, 0xF0, // 0, 4096, −4096
        0x00, 0x08, 0x00, 0xF8, 0x01, 0x00, // 2048, −2048, 1
        0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x80, // −1, 32767, −32768
    ]
    static let raw = ActiGraphRawPacket(sequence: 0x1234, firstSampleSeconds: start, firstSampleMilliseconds: 500, rateHz: 30, samples: [
        ActiGraphAxes(x: 0, y: 4096, z: -4096), ActiGraphAxes(x: 2048, y: -2048, z: 1), ActiGraphAxes(x: -1, y: 32767, z: -32768),
    ])

    @Test("a raw packet is sequence u16, time u32 s + u16 ms, rate u8, count u8, then x/y/z i16 in 1/4096 g")
    func rawPacket() throws {
        #expect(Self.raw.encoded() == Self.rawBytes)
        #expect(try ActiGraphRawPacket(decoding: Self.rawBytes) == Self.raw)
        expectWrongLengthsTruncated(Self.rawBytes) { bytes throws(GATTCodecError) in _ = try ActiGraphRawPacket(decoding: bytes) }
        let empty: [UInt8] = [0xFF, 0xFF, 0xEC, 0xC4, 0xAD, 0x55, 0x00, 0x00, 0x64, 0x00]
        #expect(try ActiGraphRawPacket(decoding: empty) == ActiGraphRawPacket(
            sequence: 0xFFFF, firstSampleSeconds: Self.start, firstSampleMilliseconds: 0, rateHz: 100, samples: []))
    }

    @Test("raw samples are in g, sample i at first time + i × 1000/rate ms (30 Hz: +0, +33, +67)")
    func rawSampleTimes() {
        #expect(Self.raw.accelerations == [
            ActiGraphAcceleration(timestamp: 1_437_451_500_500, x: 0, y: 1, z: -1),
            ActiGraphAcceleration(timestamp: 1_437_451_500_533, x: 0.5, y: -0.5, z: 1.0 / 4096),
            ActiGraphAcceleration(timestamp: 1_437_451_500_567, x: -1.0 / 4096, y: 32767.0 / 4096, z: -8),
        ])
        var fast = Self.raw
        fast.rateHz = 100
        fast.firstSampleMilliseconds = 995
        #expect(fast.accelerations.map(\.timestamp) == [1_437_451_500_995, 1_437_451_501_005, 1_437_451_501_015])
        let forty = ActiGraphRawPacket(sequence: 0, firstSampleSeconds: 0, firstSampleMilliseconds: 0, rateHz: 40,
                                       samples: Array(repeating: ActiGraphAxes(x: 0, y: 0, z: 0), count: 40))
        #expect(forty.accelerations.last?.timestamp == 975)
    }

    @Test("a raw packet with ms past 999, a rate outside 30–100 or more than 40 samples is refused")
    func malformedRawPacket() {
        var late = Self.rawBytes
        late[6] = 0xE8
        late[7] = 0x03 // 1000 ms
        #expect(throws: GATTCodecError.outOfRange(field: "first sample milliseconds", value: 1000)) { try ActiGraphRawPacket(decoding: late) }
        var stopped = Self.rawBytes
        stopped[8] = 0x00
        #expect(throws: GATTCodecError.outOfRange(field: "rate", value: 0)) { try ActiGraphRawPacket(decoding: stopped) }
        var tooFast = Self.rawBytes
        tooFast[8] = 101
        #expect(throws: GATTCodecError.outOfRange(field: "rate", value: 101)) { try ActiGraphRawPacket(decoding: tooFast) }
        let header: [UInt8] = [0x00, 0x00, 0xEC, 0xC4, 0xAD, 0x55, 0x00, 0x00, 0x1E, 41]
        #expect(throws: GATTCodecError.outOfRange(field: "sample count", value: 41)) {
            try ActiGraphRawPacket(decoding: header + Array(repeating: 0, count: 41 * 6))
        }
    }

    static let gyroscopeBytes: [UInt8] = [
        0x02, // gyroscope
        0x07, 0x00, // sequence 7
        0xEC, 0xC4, 0xAD, 0x55, // 1437451500 s
        0xE7, 0x03, // + 999 ms
        0x64, // 100 Hz
        0x02, // 2 samples
        0xA4, 0x00, 0x5C, 0xFF, 0x00, 0x00, // 164, −164, 0 (±10 °/s)
        0x48, 0x01, 0x00, 0x00, 0xB8, 0xFE, // 328, 0, −328 (±20 °/s)
    ]

    @Test("an IMU packet is sensor u8, then the raw header; gyroscope i16 × 3 in 1/16.4 °/s")
    func gyroscopePacket() throws {
        let packet = ActiGraphIMUPacket(sensor: .gyroscope, sequence: 7, firstSampleSeconds: Self.start, firstSampleMilliseconds: 999,
                                        rateHz: 100, rawSamples: [[164, -164, 0], [328, 0, -328]])
        #expect(packet.encoded() == Self.gyroscopeBytes)
        #expect(try ActiGraphIMUPacket(decoding: Self.gyroscopeBytes) == packet)
        expectWrongLengthsTruncated(Self.gyroscopeBytes) { bytes throws(GATTCodecError) in _ = try ActiGraphIMUPacket(decoding: bytes) }
        let measurements = packet.measurements
        #expect(measurements.map(\.timestamp) == [1_437_451_500_999, 1_437_451_501_009])
        expectClose(measurements.flatMap(\.values), [10, -10, 0, 20, 0, -20])
    }

    @Test("IMU units: accelerometer 1/4096 g, magnetometer 0.15 µT, temperature one i16 of 0.01 °C")
    func imuUnits() throws {
        let accelerometer: [UInt8] = [0x01, 0x00, 0x00, 0xEC, 0xC4, 0xAD, 0x55, 0x00, 0x00, 0x32, 0x01, 0x00, 0x10, 0x00, 0xF8, 0x00, 0x00]
        let decodedAccelerometer = try ActiGraphIMUPacket(decoding: accelerometer)
        #expect(decodedAccelerometer.sensor == .accelerometer)
        #expect(decodedAccelerometer.rateHz == 50)
        expectClose(decodedAccelerometer.measurements.flatMap(\.values), [1, -0.5, 0])

        let magnetometer: [UInt8] = [0x03, 0x00, 0x00, 0xEC, 0xC4, 0xAD, 0x55, 0x00, 0x00, 0x0A, 0x01, 0x64, 0x00, 0x9C, 0xFF, 0x00, 0x00]
        expectClose(try ActiGraphIMUPacket(decoding: magnetometer).measurements.flatMap(\.values), [15, -15, 0])

        let temperatureBytes: [UInt8] = [
            0x04, // temperature
            0x00, 0x00, // sequence 0
            0xEC, 0xC4, 0xAD, 0x55, 0x00, 0x00, // 1437451500 s + 0 ms
            0x01, // 1 Hz
            0x02, // 2 samples
            0x42, 0x0E, // 3650: 36.50 °C
            0x83, 0xFF, // −125: −1.25 °C
        ]
        let temperature = ActiGraphIMUPacket(sensor: .temperature, sequence: 0, firstSampleSeconds: Self.start,
                                             firstSampleMilliseconds: 0, rateHz: 1, rawSamples: [[3650], [-125]])
        #expect(temperature.encoded() == temperatureBytes)
        #expect(try ActiGraphIMUPacket(decoding: temperatureBytes) == temperature)
        #expect(temperature.measurements.map(\.timestamp) == [1_437_451_500_000, 1_437_451_501_000])
        expectClose(temperature.measurements.flatMap(\.values), [36.5, -1.25])
        expectWrongLengthsTruncated(temperatureBytes) { bytes throws(GATTCodecError) in _ = try ActiGraphIMUPacket(decoding: bytes) }
    }

    @Test("an IMU packet from sensor 0 or 5, with rate 0 or ms past 999 is refused")
    func malformedIMUPacket() {
        for sensor: UInt8 in [0, 5] {
            var bytes = Self.gyroscopeBytes
            bytes[0] = sensor
            #expect(throws: GATTCodecError.unknownIdentifier(field: "IMU sensor", value: Int(sensor))) { try ActiGraphIMUPacket(decoding: bytes) }
        }
        var stopped = Self.gyroscopeBytes
        stopped[9] = 0
        #expect(throws: GATTCodecError.outOfRange(field: "rate", value: 0)) { try ActiGraphIMUPacket(decoding: stopped) }
        var late = Self.gyroscopeBytes
        late[7] = 0xE8 // 1000 ms
        #expect(throws: GATTCodecError.outOfRange(field: "first sample milliseconds", value: 1000)) { try ActiGraphIMUPacket(decoding: late) }
    }
}

/// Scaled values agree with the expected ones to within rounding of the scale factor.
func expectClose(_ actual: [Double], _ expected: [Double], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(actual.count == expected.count, "\(actual) vs \(expected)", sourceLocation: sourceLocation)
    for (value, wanted) in zip(actual, expected) {
        #expect(abs(value - wanted) < 1e-9, "\(value) is not \(wanted)", sourceLocation: sourceLocation)
    }
}
