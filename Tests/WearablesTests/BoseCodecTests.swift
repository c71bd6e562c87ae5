import Testing

@testable import Wearables

/// The Bose Wearable codecs against byte vectors written out by hand from the documented layout (Bose's SDK, as
/// summarised in the project's protocol facts: every multi-byte field big-endian), not produced by the encoders.
///
/// Where a test says "the SDK", it means the BoseWearable iOS SDK's source vendored in the public repository
/// `umarqattan/Vudu` (commit fea3976a) under `Pods/BoseWearable/Modules/BoseWearable/Source/`, and names the file
/// and function whose behaviour the vector checks.
@Suite("Bose Wearable codecs")
struct BoseCodecTests {
    // MARK: WearableDeviceInformation

    /// major 2, minor 5, product 0x402C, variant 1, sensors 0x01000025, gestures 0x00000009,
    /// transmission 20 ms, payload 0x01A0 = 416, 3 active sensors, status 0x000F.
    static let deviceInformationBytes: [UInt8] = [
        0x02, 0x05, 0x40, 0x2C, 0x01,
        0x01, 0x00, 0x00, 0x25,
        0x00, 0x00, 0x00, 0x09,
        0x14, 0x01, 0xA0, 0x03,
        0x00, 0x0F,
    ]

    @Test("WearableDeviceInformation: 19 big-endian bytes, field by field")
    func deviceInformation() throws {
        let information = try BoseDeviceInformation.decode(Self.deviceInformationBytes)
        #expect(information.majorVersion == 2)
        #expect(information.minorVersion == 5)
        #expect(information.productID == 0x402C)
        #expect(information.variant == 1)
        #expect(information.availableSensorsMask == 0x0100_0025)
        #expect(information.availableGesturesMask == 0x0000_0009)
        #expect(information.transmissionPeriodMilliseconds == 20)
        #expect(information.maxPayloadPerTransmissionPeriod == 416)
        #expect(information.maxActiveSensors == 3)
        #expect(information.status == [.pairingEnabled, .secureBLEPairingRequired, .alreadyPairedToClient, .sensorServiceSuspended])
        #expect(information.encode() == Self.deviceInformationBytes)
        #expect(BoseDeviceInformation.length == Self.deviceInformationBytes.count)
    }

    @Test("the availability masks name sensors by bit (id n ↔ bit n) and gestures by bit id − 0x80; unknown bits are left out")
    func availabilityMasks() throws {
        let information = try BoseDeviceInformation.decode(Self.deviceInformationBytes)
        // 0x01000025: bits 0, 2, 5 and 24 (no sensor has id 24).
        #expect(information.availableSensors == [.accelerometer, .rotation, .magnetometer])
        // 0x09: bits 0 and 3.
        #expect(information.availableGestures == [.singleTap, .headShake])

        var every = Self.deviceInformationBytes
        every.replaceSubrange(5..<13, with: [0x00, 0x00, 0x00, 0x7F, 0x00, 0x00, 0x00, 0x0F])
        let all = try BoseDeviceInformation.decode(every)
        #expect(all.availableSensors == BoseSensor.allCases)
        #expect(all.availableGestures == BoseGesture.allCases)

        for sensor in BoseSensor.allCases {
            var bytes = Self.deviceInformationBytes
            bytes.replaceSubrange(5..<9, with: [0x00, 0x00, 0x00, UInt8(1) << sensor.rawValue])
            #expect(try BoseDeviceInformation.decode(bytes).availableSensors == [sensor])
        }
        for gesture in BoseGesture.allCases {
            var bytes = Self.deviceInformationBytes
            bytes.replaceSubrange(9..<13, with: [0x00, 0x00, 0x00, UInt8(1) << (gesture.rawValue - 0x80)])
            #expect(try BoseDeviceInformation.decode(bytes).availableGestures == [gesture])
        }
    }

    @Test(
        "device status: bit 0 pairing enabled, 1 secure pairing required, 2 already paired, 3 sensor service suspended",
        arguments: [
            (UInt8(0x01), BoseDeviceInformation.Status.pairingEnabled, "pairing_enabled"),
            (0x02, .secureBLEPairingRequired, "secure_pairing_required"),
            (0x04, .alreadyPairedToClient, "already_paired_to_client"),
            (0x08, .sensorServiceSuspended, "sensor_service_suspended"),
        ] as [(UInt8, BoseDeviceInformation.Status, String)]
    )
    func statusBit(low: UInt8, status: BoseDeviceInformation.Status, field: String) throws {
        var bytes = Self.deviceInformationBytes
        bytes[17] = 0x00
        bytes[18] = low
        let information = try BoseDeviceInformation.decode(bytes)
        #expect(information.status == status)
        #expect(information.encode() == bytes)
        let fields = information.status.fields
        #expect(fields.count == 4)
        for (name, value) in fields {
            #expect(value == .flag(name == field), "\(name)")
        }
    }

    @Test("the status is the low byte of a big-endian u16: 0x0100 sets no known bit")
    func statusIsBigEndian() throws {
        var bytes = Self.deviceInformationBytes
        bytes[17] = 0x01
        bytes[18] = 0x00
        let information = try BoseDeviceInformation.decode(bytes)
        #expect(information.status.rawValue == 0x0100)
        #expect(!information.status.contains(.pairingEnabled))
        #expect(information.encode() == bytes, "unknown status bits survive a round trip")
    }

    @Test("bytes after the 19 are ignored (later firmware may append fields); every shorter prefix is truncated")
    func deviceInformationLength() throws {
        let longer = Self.deviceInformationBytes + [0xAA, 0xBB]
        #expect(try BoseDeviceInformation.decode(longer) == BoseDeviceInformation.decode(Self.deviceInformationBytes))
        expectEveryPrefixTruncated(Self.deviceInformationBytes) { bytes throws(GATTCodecError) in
            _ = try BoseDeviceInformation.decode(bytes)
        }
    }

    // MARK: SensorInformation

    /// Accelerometer: −16…16 over −32768…32767, every period, 7-byte samples.
    static let accelerometerEntry: [UInt8] = [0x00, 0xFF, 0xF0, 0x00, 0x10, 0x80, 0x00, 0x7F, 0xFF, 0x00, 0x1F, 0x07]
    /// Gyroscope: −2000…2000 over −32767…32767, 40 and 20 ms (bits 3 and 4), 7-byte samples.
    static let gyroscopeEntry: [UInt8] = [0x01, 0xF8, 0x30, 0x07, 0xD0, 0x80, 0x01, 0x7F, 0xFF, 0x00, 0x18, 0x07]
    /// Rotation: −1…1 over −16384…16384, 320 ms only, 12-byte samples (2 more than the layout needs).
    static let rotationEntry: [UInt8] = [0x02, 0xFF, 0xFF, 0x00, 0x01, 0xC0, 0x00, 0x40, 0x00, 0x00, 0x01, 0x0C]
    /// Sensor id 9, which this code does not know: 4-byte samples.
    static let unknownEntry: [UInt8] = [0x09, 0x00, 0x00, 0x00, 0x64, 0x00, 0x00, 0x00, 0xFF, 0x00, 0x10, 0x04]

    @Test("SensorInformation: 12-byte entries of id, scaled and raw ranges (i16), period mask and sample length")
    func sensorInformation() throws {
        let bytes = Self.accelerometerEntry + Self.gyroscopeEntry + Self.rotationEntry + Self.unknownEntry
        let information = try BoseSensorInformation.decode(bytes)
        #expect(information.entries == [
            .init(sensorID: 0, minimumScaled: -16, maximumScaled: 16, minimumRaw: -32768, maximumRaw: 32767,
                  availablePeriodsMask: 0x1F, sampleLength: 7),
            .init(sensorID: 1, minimumScaled: -2000, maximumScaled: 2000, minimumRaw: -32767, maximumRaw: 32767,
                  availablePeriodsMask: 0x18, sampleLength: 7),
            .init(sensorID: 2, minimumScaled: -1, maximumScaled: 1, minimumRaw: -16384, maximumRaw: 16384,
                  availablePeriodsMask: 0x01, sampleLength: 12),
            .init(sensorID: 9, minimumScaled: 0, maximumScaled: 100, minimumRaw: 0, maximumRaw: 255,
                  availablePeriodsMask: 0x10, sampleLength: 4),
        ])
        #expect(information.entries.map(\.sensor) == [.accelerometer, .gyroscope, .rotation, nil])
        #expect(information.entry(for: .gyroscope)?.sensorID == 1)
        #expect(information.entry(for: 9)?.sampleLength == 4)
        #expect(information.entry(for: .magnetometer) == nil)
        #expect(information.encode() == bytes)
        #expect(BoseSensorInformation.entryLength == 12)
    }

    @Test("the period mask: bit 0 320 ms, 1 160, 2 80, 3 40, 4 20")
    func periodMask() throws {
        let expected: [(UInt16, BoseSamplePeriod)] = [
            (0x01, .milliseconds320), (0x02, .milliseconds160), (0x04, .milliseconds80), (0x08, .milliseconds40),
            (0x10, .milliseconds20),
        ]
        for (mask, period) in expected {
            #expect(BoseSamplePeriod.periods(inMask: mask) == [period])
            #expect(period.maskBit == mask)
        }
        let information = try BoseSensorInformation.decode(Self.gyroscopeEntry)
        #expect(information.entries[0].availablePeriods == [.milliseconds20, .milliseconds40])
        #expect(try BoseSensorInformation.decode(Self.accelerometerEntry).entries[0].availablePeriods.map(\.rawValue)
            == [20, 40, 80, 160, 320])
        #expect(BoseSamplePeriod.mask(of: [.milliseconds20, .milliseconds320]) == 0x11)
    }

    @Test("scaling: value = (raw − minRaw) × (maxScaled − minScaled) / (maxRaw − minRaw) + minScaled")
    func scaling() throws {
        let accelerometer = try BoseSensorInformation.decode(Self.accelerometerEntry).entries[0]
        #expect(accelerometer.scale(-32768) == -16)
        #expect(accelerometer.scale(32767) == 16)
        // (0 + 32768) × 32 / 65535 − 16 = 16 / 65535: the asymmetric raw range puts raw 0 half a step above 0.
        #expect(abs(accelerometer.scale(0) - 16.0 / 65535) < 1e-12)
        #expect(abs(accelerometer.scale(-16384) - (16384.0 * 32 / 65535 - 16)) < 1e-12)

        let gyroscope = try BoseSensorInformation.decode(Self.gyroscopeEntry).entries[0]
        #expect(gyroscope.scale(0) == 0)
        #expect(gyroscope.scale(32767) == 2000)
        #expect(gyroscope.scale(-32767) == -2000)
        #expect(abs(gyroscope.scale(16384) - 16384.0 * 2000 / 32767) < 1e-9)

        let rotation = try BoseSensorInformation.decode(Self.rotationEntry).entries[0]
        #expect(rotation.scale(16384) == 1)
        #expect(rotation.scale(-16384) == -1)
        #expect(rotation.scale(8192) == 0.5)
        #expect(rotation.scale(0) == 0)

        let unknown = try BoseSensorInformation.decode(Self.unknownEntry).entries[0]
        #expect(abs(unknown.scale(51) - 20) < 1e-12) // 51 × 100 / 255
    }

    @Test("every prefix of SensorInformation decodes to its whole entries; a partial rest is ignored and noted")
    func sensorInformationPrefixes() throws {
        let bytes = Self.accelerometerEntry + Self.gyroscopeEntry + Self.rotationEntry
        let full = try BoseSensorInformation.decode(bytes)
        for length in 0...bytes.count {
            let decoded = try BoseSensorInformation.decode(Array(bytes.prefix(length)))
            #expect(decoded.entries == Array(full.entries.prefix(length / 12)), "\(length)-byte prefix")
            #expect(decoded.ignored == (length % 12 == 0 ? [] : [.partialEntry(byteCount: length % 12)]), "\(length)-byte prefix")
        }
    }

    /// The SDK: `SensorInformation.swift`, `SensorInformation.init?(payload:)` reads entries
    /// `while offset + length <= data.count`, so 1–11 bytes after the last whole entry are never looked at.
    @Test("a partial trailing SensorInformation entry (1…11 bytes) is ignored, as the SDK's entry loop ignores it")
    func sensorInformationPartialEntry() throws {
        let bytes = Self.accelerometerEntry + Self.gyroscopeEntry
        let whole = try BoseSensorInformation.decode(bytes)
        #expect(whole.ignored.isEmpty)
        for extra in 1..<12 {
            let decoded = try BoseSensorInformation.decode(bytes + Self.rotationEntry.prefix(extra))
            #expect(decoded.entries == whole.entries, "\(extra) extra bytes")
            #expect(decoded.ignored == [.partialEntry(byteCount: extra)])
            #expect(decoded.encode() == bytes, "the ignored bytes are not written back")
        }
    }

    /// The SDK: `SensorInformation.swift`, `Entry.init?(payload:)` guards `minScaled <= maxScaled` and
    /// `minRaw <= maxRaw`; a failing entry is not appended and the loop goes on with the next.
    @Test("an entry whose minimum exceeds its maximum (scaled or raw) is dropped; the entries around it are kept")
    func invertedRangeDropped() throws {
        // The gyroscope entry with min scaled 2000 (0x07D0) and max scaled −2000 (0xF830) swapped.
        let invertedScaled: [UInt8] = [0x01, 0x07, 0xD0, 0xF8, 0x30, 0x80, 0x01, 0x7F, 0xFF, 0x00, 0x18, 0x07]
        // The rotation entry with min raw 16384 (0x4000) and max raw −16384 (0xC000) swapped.
        let invertedRaw: [UInt8] = [0x02, 0xFF, 0xFF, 0x00, 0x01, 0x40, 0x00, 0xC0, 0x00, 0x00, 0x01, 0x0C]
        let bytes = Self.accelerometerEntry + invertedScaled + invertedRaw + Self.unknownEntry
        let information = try BoseSensorInformation.decode(bytes)
        #expect(information.entries.map(\.sensorID) == [0, 9])
        #expect(information.entries == (try BoseSensorInformation.decode(Self.accelerometerEntry + Self.unknownEntry)).entries)
        #expect(information.ignored == [.invertedRange(sensorID: 1), .invertedRange(sensorID: 2)])
        #expect(information.entry(for: .gyroscope) == nil)

        // Equal bounds are not inverted: an empty scaled range passes (every value scales to it), an empty raw
        // range is still refused below.
        var flatScaled = Self.gyroscopeEntry
        flatScaled.replaceSubrange(1..<5, with: [0x00, 0x05, 0x00, 0x05])
        #expect(try BoseSensorInformation.decode(flatScaled).entries.first?.scale(1234) == 5)

        // A dropped sensor is unknown to the records: the SDK finds no sample length for it and stops there.
        let records = BoseSensorData.decodeRecords(Self.accelerometerRecord + Self.gyroscopeRecord, information: information)
        #expect(records.records == [Self.expectedRecords[0]])
        #expect(records.problem == .unknownIdentifier(field: "sensor id", value: 1))
    }

    @Test("an empty raw range is refused (scaling would divide by zero)")
    func emptyRawRange() {
        // minRaw = maxRaw = 0x0100.
        let entry: [UInt8] = [0x00, 0xFF, 0xF0, 0x00, 0x10, 0x01, 0x00, 0x01, 0x00, 0x00, 0x1F, 0x07]
        #expect(throws: GATTCodecError.outOfRange(field: "sensor 0 raw range", value: 256)) {
            try BoseSensorInformation.decode(entry)
        }
    }

    @Test("a known sensor whose sample length is shorter than its layout is refused; an unknown sensor's is not judged")
    func shortSampleLength() throws {
        var accelerometer = Self.accelerometerEntry
        accelerometer[11] = 6
        #expect(throws: GATTCodecError.outOfRange(field: "sensor 0 sample length", value: 6)) {
            try BoseSensorInformation.decode(accelerometer)
        }
        var rotation = Self.rotationEntry
        rotation[11] = 9 // the layout needs 10
        #expect(throws: GATTCodecError.outOfRange(field: "sensor 2 sample length", value: 9)) {
            try BoseSensorInformation.decode(rotation)
        }
        var unknown = Self.unknownEntry
        unknown[11] = 1
        #expect(try BoseSensorInformation.decode(unknown).entries[0].sampleLength == 1)
    }

    // MARK: SensorConfiguration

    @Test("SensorConfiguration: 3-byte entries [id][period ms u16 BE], 0 disables")
    func sensorConfiguration() throws {
        // accelerometer 20 ms, gyroscope 20 ms, rotation off, magnetometer 320 ms (0x0140), id 9 at 40 ms.
        let bytes: [UInt8] = [0x00, 0x00, 0x14, 0x01, 0x00, 0x14, 0x02, 0x00, 0x00, 0x05, 0x01, 0x40, 0x09, 0x00, 0x28]
        let configuration = try BoseSensorConfiguration.decode(bytes)
        #expect(configuration.entries == [
            .init(sensorID: 0, periodMilliseconds: 20), .init(sensorID: 1, periodMilliseconds: 20),
            .init(sensorID: 2, periodMilliseconds: 0), .init(sensorID: 5, periodMilliseconds: 320),
            .init(sensorID: 9, periodMilliseconds: 40),
        ])
        #expect(configuration.enabledSensors == [.accelerometer, .gyroscope, .magnetometer])
        #expect(configuration.period(of: .magnetometer) == 320)
        #expect(configuration.period(of: .rotation) == 0)
        #expect(configuration.period(of: .gameRotation) == 0, "not listed")
        #expect(configuration.encode() == bytes, "the unknown id 9 is written back as it was")
        #expect(try BoseSensorConfiguration.decode([]).entries.isEmpty)
    }

    @Test("setting a period changes the listed entry in place and appends one the device did not list")
    func sensorConfigurationEditing() {
        var configuration = BoseSensorConfiguration(disabling: [0, 1, 2])
        #expect(configuration.encode() == [0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x02, 0x00, 0x00])
        configuration.setPeriod(40, for: .gyroscope)
        configuration.setPeriod(40, for: .uncalibratedMagnetometer)
        #expect(configuration.encode() == [0x00, 0x00, 0x00, 0x01, 0x00, 0x28, 0x02, 0x00, 0x00, 0x06, 0x00, 0x28])
    }

    @Test("every prefix of SensorConfiguration ends at an entry or is truncated; a partial entry is truncated")
    func sensorConfigurationMalformed() {
        let bytes: [UInt8] = [0x00, 0x00, 0x14, 0x01, 0x00, 0x14, 0x02, 0x00, 0x00]
        expectPrefixesFrame(bytes, boundaries: [0, 3, 6, 9]) { prefix throws(GATTCodecError) in
            try BoseSensorConfiguration.decode(prefix).entries.count
        }
        #expect(throws: GATTCodecError.truncated(expected: 6, actual: 5)) {
            try BoseSensorConfiguration.decode([0x00, 0x00, 0x14, 0x01, 0x00])
        }
        // The id of the second entry is there, its period is not: reading it needs bytes 5 and 6.
        #expect(throws: GATTCodecError.truncated(expected: 6, actual: 4)) {
            try BoseSensorConfiguration.decode([0x00, 0x00, 0x14, 0x01])
        }
    }

    // MARK: SensorData

    /// All seven sensors with plausible scaling, each at its layout's sample length.
    static let allSensors = BoseSensorInformation(entries: [
        .init(sensorID: 0, minimumScaled: -16, maximumScaled: 16, minimumRaw: -32768, maximumRaw: 32767,
              availablePeriodsMask: 0x1F, sampleLength: 7),
        .init(sensorID: 1, minimumScaled: -2000, maximumScaled: 2000, minimumRaw: -32767, maximumRaw: 32767,
              availablePeriodsMask: 0x1F, sampleLength: 7),
        .init(sensorID: 2, minimumScaled: -1, maximumScaled: 1, minimumRaw: -16384, maximumRaw: 16384,
              availablePeriodsMask: 0x1F, sampleLength: 10),
        .init(sensorID: 3, minimumScaled: -1, maximumScaled: 1, minimumRaw: -16384, maximumRaw: 16384,
              availablePeriodsMask: 0x1F, sampleLength: 8),
        .init(sensorID: 4, minimumScaled: -360, maximumScaled: 360, minimumRaw: -32767, maximumRaw: 32767,
              availablePeriodsMask: 0x1F, sampleLength: 7),
        .init(sensorID: 5, minimumScaled: -1300, maximumScaled: 1300, minimumRaw: -32767, maximumRaw: 32767,
              availablePeriodsMask: 0x1F, sampleLength: 7),
        .init(sensorID: 6, minimumScaled: -1300, maximumScaled: 1300, minimumRaw: -32767, maximumRaw: 32767,
              availablePeriodsMask: 0x1F, sampleLength: 12),
    ])

    /// [id][timestamp u16][payload], by hand.
    static let accelerometerRecord: [UInt8] = [0x00, 0x12, 0x34, 0x80, 0x00, 0x7F, 0xFF, 0xC0, 0x00, 0x03]
    static let gyroscopeRecord: [UInt8] = [0x01, 0x12, 0x34, 0x00, 0x01, 0xFF, 0xFF, 0x7F, 0xFF, 0x02]
    static let rotationRecord: [UInt8] = [0x02, 0xFF, 0xFE, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0xC0, 0x00, 0x01, 0x00]
    static let gameRotationRecord: [UInt8] = [0x03, 0x00, 0x00, 0x20, 0x00, 0xE0, 0x00, 0x00, 0x01, 0x40, 0x00]
    static let orientationRecord: [UInt8] = [0x04, 0x01, 0x00, 0x7F, 0xFF, 0x00, 0x00, 0x80, 0x01, 0x00]
    static let magnetometerRecord: [UInt8] = [0x05, 0x00, 0x01, 0x03, 0xE8, 0xFC, 0x18, 0x00, 0x00, 0x01]
    static let uncalibratedRecord: [UInt8] = [
        0x06, 0xAB, 0xCD, 0x00, 0x0A, 0x00, 0x14, 0xFF, 0xE2, 0x00, 0x01, 0xFF, 0xFF, 0x7F, 0xFF,
    ]

    static let expectedRecords: [BoseSensorRecord] = [
        BoseSensorRecord(sensor: .accelerometer, timestamp: 0x1234, payload: .vector(x: -32768, y: 32767, z: -16384, accuracy: 3)),
        BoseSensorRecord(sensor: .gyroscope, timestamp: 0x1234, payload: .vector(x: 1, y: -1, z: 32767, accuracy: 2)),
        BoseSensorRecord(sensor: .rotation, timestamp: 0xFFFE,
                         payload: .quaternion(x: 16384, y: 0, z: 0, w: -16384, accuracy: 256)),
        BoseSensorRecord(sensor: .gameRotation, timestamp: 0,
                         payload: .quaternion(x: 8192, y: -8192, z: 1, w: 16384, accuracy: nil)),
        BoseSensorRecord(sensor: .orientation, timestamp: 0x0100, payload: .vector(x: 32767, y: 0, z: -32767, accuracy: 0)),
        BoseSensorRecord(sensor: .magnetometer, timestamp: 1, payload: .vector(x: 1000, y: -1000, z: 0, accuracy: 1)),
        BoseSensorRecord(sensor: .uncalibratedMagnetometer, timestamp: 0xABCD,
                         payload: .uncalibratedVector(x: 10, y: 20, z: -30, biasX: 1, biasY: -1, biasZ: 32767)),
    ]

    static let allRecordBytes: [[UInt8]] = [
        accelerometerRecord, gyroscopeRecord, rotationRecord, gameRotationRecord, orientationRecord, magnetometerRecord,
        uncalibratedRecord,
    ]

    @Test("each of the seven sensors' records decodes alone and encodes back to its bytes", arguments: 0..<7)
    func singleRecord(index: Int) throws {
        let bytes = Self.allRecordBytes[index]
        #expect(try BoseSensorData.decode(bytes, information: Self.allSensors) == [Self.expectedRecords[index]])
        #expect(BoseSensorData.encode([Self.expectedRecords[index]], information: Self.allSensors) == bytes)
    }

    @Test("several records of different sensors in one notification, in wire order")
    func concatenatedRecords() throws {
        let bytes = Self.allRecordBytes.reduce([], +)
        #expect(bytes.count == 7 * 3 + 7 + 7 + 10 + 8 + 7 + 7 + 12)
        #expect(try BoseSensorData.decode(bytes, information: Self.allSensors) == Self.expectedRecords)
        #expect(BoseSensorData.encode(Self.expectedRecords, information: Self.allSensors) == bytes)
        #expect(try BoseSensorData.decode([], information: Self.allSensors).isEmpty)
    }

    @Test("records scale into the contract's values with their sensor's entry")
    func scaledReadings() throws {
        func reading(_ index: Int) throws -> SensorReading {
            let record = Self.expectedRecords[index]
            return record.reading(scaledWith: try #require(Self.allSensors.entry(for: record.sensor)))
        }
        expectReading(try reading(0), .vector(x: -16, y: 16, z: 16384.0 * 32 / 65535 - 16, accuracy: .high))
        expectReading(try reading(1), .vector(x: 2000.0 / 32767, y: -2000.0 / 32767, z: 2000, accuracy: .medium))
        expectReading(try reading(2), .quaternion(x: 1, y: 0, z: 0, w: -1, accuracy: 256.0 / 16384))
        expectReading(try reading(3), .quaternion(x: 0.5, y: -0.5, z: 1.0 / 16384, w: 1, accuracy: nil))
        expectReading(try reading(4), .vector(x: 360, y: 0, z: -360, accuracy: .unreliable))
        expectReading(try reading(5), .vector(x: 1000 * 1300 / 32767.0, y: -1000 * 1300 / 32767.0, z: 0, accuracy: .low))
        expectReading(try reading(6), .uncalibratedVector(
            x: 10 * 1300 / 32767.0, y: 20 * 1300 / 32767.0, z: -30 * 1300 / 32767.0,
            biasX: 1300 / 32767.0, biasY: -1300 / 32767.0, biasZ: 1300))
    }

    @Test("vector accuracy 0…3 is unreliable, low, medium, high; anything else is left out")
    func vectorAccuracy() throws {
        let entry = try #require(Self.allSensors.entry(for: .accelerometer))
        let expected: [SensorAccuracy?] = [.unreliable, .low, .medium, .high, nil, nil]
        for (raw, accuracy) in zip([UInt8(0), 1, 2, 3, 4, 255], expected) {
            var bytes = Self.accelerometerRecord
            bytes[9] = raw
            let record = try #require(try BoseSensorData.decode(bytes, information: Self.allSensors).first)
            guard case .vector(_, _, _, let decoded) = record.reading(scaledWith: entry) else {
                Issue.record("not a vector")
                continue
            }
            #expect(decoded == accuracy, "accuracy byte \(raw)")
        }
    }

    @Test("a sample length longer than the layout: the extra bytes are skipped and the next record still frames")
    func longerSampleLength() throws {
        var information = Self.allSensors
        information.entries[2].sampleLength = 12
        let bytes = Self.rotationRecord + [0xAA, 0xBB] + Self.accelerometerRecord
        #expect(try BoseSensorData.decode(bytes, information: information) == [Self.expectedRecords[2], Self.expectedRecords[0]])
        // The encoder pads to the announced length with zeros.
        #expect(BoseSensorData.encode([Self.expectedRecords[2], Self.expectedRecords[0]], information: information)
            == Self.rotationRecord + [0x00, 0x00] + Self.accelerometerRecord)
    }

    @Test("a sensor SensorInformation lists but this code does not know is skipped by its sample length")
    func unknownButListedSensor() throws {
        var information = Self.allSensors
        information.entries.append(.init(sensorID: 9, minimumScaled: 0, maximumScaled: 1, minimumRaw: 0, maximumRaw: 1,
                                         availablePeriodsMask: 0x1F, sampleLength: 4))
        let bytes: [UInt8] = [0x09, 0x00, 0x05, 0xDE, 0xAD, 0xBE, 0xEF] + Self.gyroscopeRecord
        #expect(try BoseSensorData.decode(bytes, information: information) == [Self.expectedRecords[1]])
    }

    @Test("a sensor id SensorInformation does not list is unknownIdentifier: the rest cannot be framed")
    func unlistedSensor() {
        #expect(throws: GATTCodecError.unknownIdentifier(field: "sensor id", value: 7)) {
            try BoseSensorData.decode([0x07, 0x00, 0x00, 0x01, 0x02], information: Self.allSensors)
        }
        var withoutGyroscope = Self.allSensors
        withoutGyroscope.entries.remove(at: 1)
        #expect(throws: GATTCodecError.unknownIdentifier(field: "sensor id", value: 1)) {
            try BoseSensorData.decode(Self.accelerometerRecord + Self.gyroscopeRecord, information: withoutGyroscope)
        }
    }

    /// The SDK: `SensorValue.swift`, `SensorValue.parse(payload:metadata:)` — its guard (id, timestamp, sample
    /// length from the metadata, a slice of that length) ends in `break`, so the values parsed before an unknown
    /// id are returned; the notification is not lost as a whole.
    @Test("decodeRecords keeps the records before an unlisted sensor id and reports the id; strict decode throws it")
    func recordsBeforeAnUnlistedSensorKept() {
        // accelerometer, gyroscope, then id 7 (listed nowhere), then a rotation record nobody can find the start of.
        let bytes = Self.accelerometerRecord + Self.gyroscopeRecord + [0x07, 0x00, 0x10, 0xAA, 0xBB] + Self.rotationRecord
        let decoded = BoseSensorData.decodeRecords(bytes, information: Self.allSensors)
        #expect(decoded.records == [Self.expectedRecords[0], Self.expectedRecords[1]])
        #expect(decoded.problem == .unknownIdentifier(field: "sensor id", value: 7))
        #expect(throws: GATTCodecError.unknownIdentifier(field: "sensor id", value: 7)) {
            try BoseSensorData.decode(bytes, information: Self.allSensors)
        }
        // An unknown id first: nothing to keep, the problem still reported.
        let first = BoseSensorData.decodeRecords([0x07] + Self.accelerometerRecord, information: Self.allSensors)
        #expect(first == BoseSensorData.Records(records: [], problem: .unknownIdentifier(field: "sensor id", value: 7)))
    }

    @Test("decodeRecords keeps the records before a record cut short and reports it as truncated", arguments: 0..<7)
    func recordsBeforeACutRecordKept(index: Int) {
        let record = Self.allRecordBytes[index]
        for extra in 1..<record.count {
            let decoded = BoseSensorData.decodeRecords(Self.gyroscopeRecord + record.prefix(extra), information: Self.allSensors)
            #expect(decoded.records == [Self.expectedRecords[1]], "\(extra) bytes of record \(index)")
            guard case .truncated(let expected, let actual) = decoded.problem else {
                Issue.record("\(extra) bytes of record \(index): \(String(describing: decoded.problem))")
                continue
            }
            #expect(actual == Self.gyroscopeRecord.count + extra && expected > actual)
        }
        let whole = BoseSensorData.decodeRecords(Self.gyroscopeRecord + record, information: Self.allSensors)
        #expect(whole == BoseSensorData.Records(records: [Self.expectedRecords[1], Self.expectedRecords[index]]))
    }

    @Test("every prefix of a notification ends at a record (fewer records) or is truncated")
    func sensorDataPrefixes() {
        let records = [Self.accelerometerRecord, Self.rotationRecord, Self.gameRotationRecord, Self.uncalibratedRecord]
        let bytes = records.reduce([], +)
        var boundaries = [0]
        for record in records { boundaries.append(boundaries.last! + record.count) }
        expectPrefixesFrame(bytes, boundaries: boundaries) { prefix throws(GATTCodecError) in
            try BoseSensorData.decode(prefix, information: Self.allSensors).count
        }
    }

    @Test("a partial trailing record (1…n bytes of the next) is truncated", arguments: 0..<7)
    func partialTrailingRecord(index: Int) {
        let record = Self.allRecordBytes[index]
        for extra in 1..<record.count {
            let input = Self.accelerometerRecord + record.prefix(extra)
            expectTruncated(input) { bytes throws(GATTCodecError) in
                _ = try BoseSensorData.decode(bytes, information: Self.allSensors)
            }
        }
    }

    @Test("hand-built information with a sample length shorter than the layout: truncated at the record")
    func sampleLengthShorterThanLayout() {
        var information = Self.allSensors
        information.entries[0].sampleLength = 6
        // The record is [id][ts][6 bytes], the accelerometer layout needs 7: the 10th byte of the notification.
        let bytes = Self.gyroscopeRecord + Array(Self.accelerometerRecord.prefix(9))
        #expect(throws: GATTCodecError.truncated(expected: 10 + 10, actual: 10 + 9)) {
            try BoseSensorData.decode(bytes, information: information)
        }
    }

    // MARK: Gestures

    @Test("GestureInformation: 2-byte entries [id][configuration length]")
    func gestureInformation() throws {
        let bytes: [UInt8] = [0x81, 0x01, 0x82, 0x01, 0x83, 0x02, 0x90, 0x01]
        let information = try BoseGestureInformation.decode(bytes)
        #expect(information.entries == [
            .init(gestureID: 0x81, configurationLength: 1), .init(gestureID: 0x82, configurationLength: 1),
            .init(gestureID: 0x83, configurationLength: 2), .init(gestureID: 0x90, configurationLength: 1),
        ])
        #expect(information.gestures == [.doubleTap, .headNod, .headShake], "0x90 is not a gesture this code knows")
        #expect(information.encode() == bytes)
        #expect(throws: GATTCodecError.truncated(expected: 4, actual: 3)) { try BoseGestureInformation.decode([0x81, 0x01, 0x82]) }
        expectPrefixesFrame(bytes, boundaries: [0, 2, 4, 6, 8]) { prefix throws(GATTCodecError) in
            try BoseGestureInformation.decode(prefix).entries.count
        }
    }

    /// Every gesture the Frames have, each with a one-byte configuration (what the SDK's gestures all use).
    static let gestureInformation = BoseGestureInformation(entries: [
        .init(gestureID: 0x80, configurationLength: 1), .init(gestureID: 0x81, configurationLength: 1),
        .init(gestureID: 0x82, configurationLength: 1), .init(gestureID: 0x83, configurationLength: 1),
    ])

    @Test("GestureConfiguration: [id][0x01 on / 0x00 off], framed by GestureInformation")
    func gestureConfiguration() throws {
        let bytes: [UInt8] = [0x80, 0x00, 0x81, 0x01, 0x82, 0x01, 0x83, 0x00]
        let configuration = try BoseGestureConfiguration.decode(bytes, information: Self.gestureInformation)
        #expect(configuration.entries == [
            .init(gestureID: 0x80, isEnabled: false), .init(gestureID: 0x81, isEnabled: true),
            .init(gestureID: 0x82, isEnabled: true), .init(gestureID: 0x83, isEnabled: false),
        ])
        #expect(configuration.enabledGestures == [.doubleTap, .headNod])
        #expect(configuration.isEnabled(.headNod))
        #expect(!configuration.isEnabled(.headShake))
        #expect(configuration.encode() == bytes)
        #expect(try BoseGestureConfiguration.decode([], information: Self.gestureInformation).entries.isEmpty)

        var edited = BoseGestureConfiguration(disabling: [0x81, 0x82])
        #expect(edited.encode() == [0x81, 0x00, 0x82, 0x00])
        edited.set(.headNod, enabled: true)
        edited.set(.headShake, enabled: true)
        #expect(edited.encode() == [0x81, 0x00, 0x82, 0x01, 0x83, 0x01])
    }

    /// The SDK: `GestureConfiguration.swift`, `IsEnabledEntry.init?(gesture:payload:)` reads
    /// `contents & 0x01 == 0x01`; its `data` writes the byte back as 0x01 or 0x00.
    @Test("enabled is bit 0 of the state byte only: 0x02 is off, 0x03 and 0xFF are on; a write-back is 0x00 or 0x01")
    func gestureStateBitZero() throws {
        let bytes: [UInt8] = [0x80, 0x02, 0x81, 0x03, 0x82, 0xFF, 0x83, 0xFE]
        var configuration = try BoseGestureConfiguration.decode(bytes, information: Self.gestureInformation)
        #expect(configuration.entries.map(\.isEnabled) == [false, true, true, false])
        #expect(configuration.enabledGestures == [.doubleTap, .headNod])
        #expect(configuration.encode() == bytes, "read-only: the bytes are kept as the device sent them")
        configuration.set(.singleTap, enabled: true)
        configuration.set(.headNod, enabled: false)
        #expect(configuration.encode() == [0x80, 0x01, 0x81, 0x03, 0x82, 0x00, 0x83, 0xFE])
    }

    /// The SDK: `GestureConfiguration.swift`, `init?(payload:metadata:)` slices each entry's configuration with
    /// `metadata.configurationPayloadLength(forGestureId:)` (GestureInformation's length) and keeps the bytes of a
    /// gesture it does not know (`UnknownEntry`) to write them back verbatim.
    @Test("entries are framed by their gesture's configuration length: 2 bytes for 0x83, 3 for an unknown 0x90")
    func gestureConfigurationFramedByInformation() throws {
        let information = BoseGestureInformation(entries: [
            .init(gestureID: 0x81, configurationLength: 1), .init(gestureID: 0x83, configurationLength: 2),
            .init(gestureID: 0x90, configurationLength: 3), .init(gestureID: 0x82, configurationLength: 1),
        ])
        let bytes: [UInt8] = [0x81, 0x01, 0x83, 0x01, 0x7E, 0x90, 0x0A, 0x0B, 0x0C, 0x82, 0x00]
        var configuration = try BoseGestureConfiguration.decode(bytes, information: information)
        #expect(configuration.entries == [
            .init(gestureID: 0x81, configuration: [0x01]), .init(gestureID: 0x83, configuration: [0x01, 0x7E]),
            .init(gestureID: 0x90, configuration: [0x0A, 0x0B, 0x0C]), .init(gestureID: 0x82, configuration: [0x00]),
        ])
        #expect(configuration.enabledGestures == [.doubleTap, .headShake])
        #expect(configuration.encode() == bytes)
        configuration.set(.headShake, enabled: false)
        #expect(configuration.encode() == [0x81, 0x01, 0x83, 0x00, 0x7E, 0x90, 0x0A, 0x0B, 0x0C, 0x82, 0x00],
                "the second byte of 0x83 and the unknown gesture's bytes are written back as read")
        expectPrefixesFrame(bytes, boundaries: [0, 2, 5, 9, 11]) { prefix throws(GATTCodecError) in
            try BoseGestureConfiguration.decode(prefix, information: information).entries.count
        }

        // A configuration length of 0: the entry is the id alone, never enabled, and not offered as configurable.
        let empty = BoseGestureInformation(entries: [.init(gestureID: 0x81, configurationLength: 0),
                                                      .init(gestureID: 0x82, configurationLength: 1)])
        let decoded = try BoseGestureConfiguration.decode([0x81, 0x82, 0x01], information: empty)
        #expect(decoded.entries == [.init(gestureID: 0x81, configuration: []), .init(gestureID: 0x82, configuration: [0x01])])
        #expect(decoded.enabledGestures == [.headNod])
    }

    @Test("the written configuration gives each gesture its configuration length; a gesture of length 0 is not offered")
    func gestureConfigurationWritten() throws {
        var deviceBytes = Self.deviceInformationBytes
        deviceBytes.replaceSubrange(9..<13, with: [0x00, 0x00, 0x00, 0x0F])
        let capabilities = BoseCapabilities(
            device: try BoseDeviceInformation.decode(deviceBytes),
            sensorInformation: BoseSensorInformation(entries: []),
            gestureInformation: BoseGestureInformation(entries: [
                .init(gestureID: 0x80, configurationLength: 0), .init(gestureID: 0x81, configurationLength: 1),
                .init(gestureID: 0x83, configurationLength: 2), .init(gestureID: 0x90, configurationLength: 3),
            ]))
        #expect(capabilities.gestures == [.doubleTap, .headShake])
        #expect(capabilities.gestureConfiguration([.doubleTap, .headShake]).encode()
            == [0x80, 0x81, 0x01, 0x83, 0x01, 0x00, 0x90, 0x00, 0x00, 0x00])
        #expect(capabilities.gestureConfiguration([]).encode() == [0x80, 0x81, 0x00, 0x83, 0x00, 0x00, 0x90, 0x00, 0x00, 0x00])
    }

    /// Where the SDK stops silently (`break` in `init?(payload:metadata:)`) the configuration is refused with a typed
    /// error instead: it is the state the gateway checks its writes against, and part of it is not the whole.
    @Test("a gesture id GestureInformation does not list is unknownIdentifier; an entry cut short is truncated")
    func gestureConfigurationMalformed() {
        #expect(throws: GATTCodecError.unknownIdentifier(field: "gesture id", value: 0x90)) {
            try BoseGestureConfiguration.decode([0x81, 0x01, 0x90, 0x01], information: Self.gestureInformation)
        }
        let bytes: [UInt8] = [0x81, 0x01, 0x82, 0x00, 0x83, 0x01]
        expectPrefixesFrame(bytes, boundaries: [0, 2, 4, 6]) { prefix throws(GATTCodecError) in
            try BoseGestureConfiguration.decode(prefix, information: Self.gestureInformation).entries.count
        }
    }

    @Test("GestureData: [id][timestamp u16 BE], possibly several")
    func gestureData() throws {
        #expect(try BoseGestureEvent.decode([0x81, 0x12, 0x34]) == [BoseGestureEvent(gesture: .doubleTap, timestamp: 0x1234)])
        #expect(try BoseGestureEvent.decode([0x82, 0xFF, 0xFF, 0x83, 0x00, 0x01]) == [
            BoseGestureEvent(gesture: .headNod, timestamp: 0xFFFF), BoseGestureEvent(gesture: .headShake, timestamp: 1),
        ])
        #expect(BoseGestureEvent(gesture: .singleTap, timestamp: 0x0102).encode() == [0x80, 0x01, 0x02])
        #expect(BoseGesture.allCases.map(\.name) == ["single_tap", "double_tap", "head_nod", "head_shake"])
        #expect(BoseGesture.allCases.map(\.maskBit) == [1, 2, 4, 8])
    }

    @Test("GestureData with an unknown gesture id is unknownIdentifier; every prefix ends at an event or is truncated")
    func gestureDataMalformed() {
        #expect(throws: GATTCodecError.unknownIdentifier(field: "gesture id", value: 0x90)) {
            try BoseGestureEvent.decode([0x81, 0x00, 0x01, 0x90, 0x00, 0x02])
        }
        #expect(throws: GATTCodecError.unknownIdentifier(field: "gesture id", value: 0x7F)) {
            try BoseGestureEvent.decode([0x7F, 0x00, 0x01])
        }
        expectPrefixesFrame([0x81, 0x00, 0x01, 0x82, 0x00, 0x02], boundaries: [0, 3, 6]) { prefix throws(GATTCodecError) in
            try BoseGestureEvent.decode(prefix).count
        }
    }

    // MARK: BoseTimestampClock

    @Test("the first timestamp is anchored to now; later ones advance by the device's own differences")
    func clockAnchorsAndFollowsTheDevice() {
        var clock = BoseTimestampClock()
        #expect(clock.unixMilliseconds(for: 1000, now: 1_700_000_000_000) == 1_700_000_000_000)
        // The notification arrived 30 ms late: the device's time is kept, not the arrival time.
        #expect(clock.unixMilliseconds(for: 1020, now: 1_700_000_000_050) == 1_700_000_000_020)
        // Delivered early relative to the anchor (the first record was late), within the 1 s ahead tolerance.
        #expect(clock.unixMilliseconds(for: 1540, now: 1_700_000_000_100) == 1_700_000_000_540)
    }

    @Test("unwraps across the 65.536 s wrap: 65500 → 20 is 56 ms later, not 65 s earlier")
    func clockUnwraps() {
        var clock = BoseTimestampClock()
        let start: Int64 = 1_700_000_000_000
        #expect(clock.unixMilliseconds(for: 65500, now: start) == start)
        #expect(clock.unixMilliseconds(for: 20, now: start + 60) == start + 56)
        #expect(clock.unixMilliseconds(for: 40, now: start + 76) == start + 76)
    }

    @Test("ten minutes of 20 ms records with jittery delivery stay on the device's time through nine wraps")
    func clockFollowsManyWraps() {
        var clock = BoseTimestampClock()
        let start: Int64 = 1_700_000_000_000
        var mismatches = 0
        for index in 0..<30_000 {
            let deviceTime = Int64(index) * 20
            let timestamp = UInt16(truncatingIfNeeded: 40_000 + deviceTime)
            let latency = Int64(index % 7) * 3 // 0…18 ms late
            if clock.unixMilliseconds(for: timestamp, now: start + deviceTime + latency) != start + deviceTime { mismatches += 1 }
        }
        #expect(mismatches == 0)
    }

    @Test("slightly out-of-order records (two sensors) step back a little instead of jumping 65 s")
    func clockStepsBack() {
        var clock = BoseTimestampClock()
        let start: Int64 = 1_700_000_000_000
        #expect(clock.unixMilliseconds(for: 10, now: start) == start)
        #expect(clock.unixMilliseconds(for: 5, now: start + 1) == start - 5)
        #expect(clock.unixMilliseconds(for: 30, now: start + 25) == start + 20)
        // Out of order across the wrap: 3 after the wrap, then 65530 (9 ms earlier).
        var wrapping = BoseTimestampClock()
        #expect(wrapping.unixMilliseconds(for: 3, now: start) == start)
        #expect(wrapping.unixMilliseconds(for: 65530, now: start + 2) == start - 9)
        #expect(wrapping.unixMilliseconds(for: 13, now: start + 12) == start + 10)
    }

    @Test("re-anchored when the device's time strays from now: too far behind (> 5 s) or ahead (> 1 s)")
    func clockReanchors() {
        let start: Int64 = 1_700_000_000_000
        var behind = BoseTimestampClock()
        _ = behind.unixMilliseconds(for: 1000, now: start)
        // The device says +1 s, the gateway +10 s: 9 s behind.
        #expect(behind.unixMilliseconds(for: 2000, now: start + 10_000) == start + 10_000)
        #expect(behind.unixMilliseconds(for: 2100, now: start + 10_150) == start + 10_100, "anchored afresh")

        var ahead = BoseTimestampClock()
        _ = ahead.unixMilliseconds(for: 1000, now: start)
        // The device restarted: its clock went from 1000 to 30000 within 10 ms of the gateway's.
        #expect(ahead.unixMilliseconds(for: 30_000, now: start + 10) == start + 10)
        #expect(ahead.unixMilliseconds(for: 30_020, now: start + 40) == start + 30)

        var tolerant = BoseTimestampClock()
        _ = tolerant.unixMilliseconds(for: 0, now: start)
        #expect(tolerant.unixMilliseconds(for: 900, now: start) == start + 900, "900 ms ahead is tolerated")
        #expect(tolerant.unixMilliseconds(for: 1000, now: start + 5_000) == start + 1000, "4 s behind is tolerated")

        var custom = BoseTimestampClock(aheadTolerance: 0, behindTolerance: 100)
        _ = custom.unixMilliseconds(for: 0, now: start)
        #expect(custom.unixMilliseconds(for: 50, now: start + 200) == start + 200)
    }

    @Test("reset forgets the anchor: the next timestamp is anchored to now")
    func clockReset() {
        let start: Int64 = 1_700_000_000_000
        var clock = BoseTimestampClock()
        _ = clock.unixMilliseconds(for: 100, now: start)
        #expect(clock.unixMilliseconds(for: 120, now: start + 30) == start + 20)
        clock.reset()
        #expect(clock.unixMilliseconds(for: 140, now: start + 60) == start + 60)
        #expect(clock.unixMilliseconds(for: 160, now: start + 90) == start + 80)
    }
}

// MARK: Helpers

/// Same case, same accuracy, every number within 1e-9 (the scaling divides, so the last bits may differ).
private func expectReading(_ actual: SensorReading, _ expected: SensorReading, sourceLocation: SourceLocation = #_sourceLocation) {
    func close(_ a: [Double], _ b: [Double]) -> Bool { a.count == b.count && zip(a, b).allSatisfy { abs($0 - $1) < 1e-9 } }
    let matches: Bool
    switch (actual, expected) {
    case (.vector(let x, let y, let z, let accuracy), .vector(let ex, let ey, let ez, let eAccuracy)):
        matches = close([x, y, z], [ex, ey, ez]) && accuracy == eAccuracy
    case (.quaternion(let x, let y, let z, let w, let accuracy), .quaternion(let ex, let ey, let ez, let ew, let eAccuracy)):
        matches = close([x, y, z, w], [ex, ey, ez, ew]) && (accuracy == nil) == (eAccuracy == nil)
            && close(accuracy.map { [$0] } ?? [], eAccuracy.map { [$0] } ?? [])
    case (.uncalibratedVector(let x, let y, let z, let bx, let by, let bz),
          .uncalibratedVector(let ex, let ey, let ez, let ebx, let eby, let ebz)):
        matches = close([x, y, z, bx, by, bz], [ex, ey, ez, ebx, eby, ebz])
    default:
        matches = false
    }
    #expect(matches, "\(actual) is not \(expected)", sourceLocation: sourceLocation)
}

/// `full` decodes and every shorter prefix throws `truncated`, naming the prefix's length as `actual` and more
/// than it as `expected`.
private func expectEveryPrefixTruncated(
    _ full: [UInt8], sourceLocation: SourceLocation = #_sourceLocation,
    _ decode: ([UInt8]) throws(GATTCodecError) -> Void
) {
    #expect(throws: Never.self, sourceLocation: sourceLocation) { try decode(full) }
    for length in 0..<full.count {
        expectTruncated(Array(full.prefix(length)), sourceLocation: sourceLocation, decode)
    }
}

/// `input` throws `truncated(expected: > count, actual: count)`.
private func expectTruncated(
    _ input: [UInt8], sourceLocation: SourceLocation = #_sourceLocation,
    _ decode: ([UInt8]) throws(GATTCodecError) -> Void
) {
    do {
        try decode(input)
        Issue.record("\(input.count) bytes \(input) decoded", sourceLocation: sourceLocation)
    } catch {
        guard case .truncated(let expected, let actual) = error, actual == input.count, expected > actual else {
            Issue.record("\(input.count) bytes threw \(error)", sourceLocation: sourceLocation)
            return
        }
    }
}

/// For a list of entries: a prefix ending at the n-th of `boundaries` decodes to n entries (what `count` returns);
/// any other prefix is truncated.
private func expectPrefixesFrame(
    _ full: [UInt8], boundaries: [Int], sourceLocation: SourceLocation = #_sourceLocation,
    _ count: ([UInt8]) throws(GATTCodecError) -> Int
) {
    #expect(boundaries.last == full.count, sourceLocation: sourceLocation)
    for length in 0...full.count {
        let prefix = Array(full.prefix(length))
        if let entries = boundaries.firstIndex(of: length) {
            do {
                #expect(try count(prefix) == entries, "\(length)-byte prefix", sourceLocation: sourceLocation)
            } catch {
                Issue.record("\(length)-byte prefix threw \(error)", sourceLocation: sourceLocation)
            }
        } else {
            expectTruncated(prefix, sourceLocation: sourceLocation) { bytes throws(GATTCodecError) in _ = try count(bytes) }
        }
    }
}
