import Testing
import Wearables

@Suite("Pulse Oximeter")
struct PulseOximeterCodecTests {
    /// SpO2 98 % (SFLOAT 0x0062) and pulse 72 bpm (0x0048).
    let normal = SpO2PulseRate(spo2: MedicalFloat16(bits: 0x0062), pulseRate: MedicalFloat16(bits: 0x0048))

    /// Continuous, flags 0x1F: every optional field.
    let continuousFull: [UInt8] = [
        0x1F,
        0x62, 0x00, 0x48, 0x00,  // normal: SpO2 98, PR 72
        0x61, 0x00, 0x49, 0x00,  // fast: SpO2 97, PR 73
        0x60, 0x00, 0x46, 0x00,  // slow: SpO2 96, PR 70
        0x20, 0x00,  // measurement status 0x0020
        0x02, 0x01, 0x00,  // device and sensor status 0x000102
        0x37, 0xF0,  // pulse amplitude index 0xF037: 55 × 10^−1 = 5.5 %
    ]

    /// Spot-check, flags 0x01: timestamp 2024-03-15 10:30:45.
    let spotCheckWithTimestamp: [UInt8] = [0x01, 0x62, 0x00, 0x48, 0x00, 0xE8, 0x07, 0x03, 0x0F, 0x0A, 0x1E, 0x2D]

    /// Spot-check, flags 0x1F: every optional field and "device clock is not set".
    let spotCheckFull: [UInt8] = [
        0x1F,
        0x62, 0x00, 0x48, 0x00,  // SpO2 98, PR 72
        0xE8, 0x07, 0x03, 0x0F, 0x0A, 0x1E, 0x2D,  // 2024-03-15 10:30:45
        0x20, 0x00,  // measurement status 0x0020
        0x02, 0x01, 0x00,  // device and sensor status 0x000102
        0x37, 0xF0,  // pulse amplitude index 5.5 %
    ]

    @Test("continuous with every optional field")
    func continuousEverything() throws {
        let measurement = try PLXContinuousMeasurement.decode(continuousFull)
        #expect(measurement.normal.spo2.value == .value(98))
        #expect(measurement.normal.pulseRate.value == .value(72))
        #expect(measurement.fast?.spo2.value == .value(97))
        #expect(measurement.fast?.pulseRate.value == .value(73))
        #expect(measurement.slow?.spo2.value == .value(96))
        #expect(measurement.slow?.pulseRate.value == .value(70))
        #expect(measurement.measurementStatus == 0x0020)
        #expect(measurement.deviceAndSensorStatus == 0x000102)
        #expect(measurement.pulseAmplitudeIndex?.value == .value(5.5))
        #expect(measurement.encode() == continuousFull)
    }

    @Test("continuous with only the normal reading, and padding ignored")
    func continuousMinimal() throws {
        let measurement = try PLXContinuousMeasurement.decode([0x00, 0x62, 0x00, 0x48, 0x00, 0x00, 0x00])
        #expect(measurement == (try PLXContinuousMeasurement(normal: normal)))
        #expect(measurement.encode() == [0x00, 0x62, 0x00, 0x48, 0x00])
    }

    @Test("continuous: each flag announces its own field")
    func continuousFlags() throws {
        // Bit 1 alone: the slow pair directly after the normal one.
        let slowOnly = try PLXContinuousMeasurement.decode([0x02, 0x62, 0x00, 0x48, 0x00, 0x60, 0x00, 0x46, 0x00])
        #expect(slowOnly.fast == nil)
        #expect(slowOnly.slow?.spo2.value == .value(96))
        // Bit 3 alone: 24-bit status.
        let statusOnly = try PLXContinuousMeasurement.decode([0x08, 0x62, 0x00, 0x48, 0x00, 0x03, 0x02, 0x01])
        #expect(statusOnly.deviceAndSensorStatus == 0x010203)
        #expect(statusOnly.measurementStatus == nil)
    }

    @Test("a finger out of the probe: SpO2 and pulse are NaN, not numbers")
    func notANumber() throws {
        let measurement = try PLXContinuousMeasurement.decode([0x00, 0xFF, 0x07, 0xFF, 0x07])
        #expect(measurement.normal.spo2.value == .nan)
        #expect(measurement.normal.pulseRate.value.doubleValue == nil)
    }

    @Test("spot-check with a timestamp")
    func spotCheckTimestamp() throws {
        let measurement = try PLXSpotCheckMeasurement.decode(spotCheckWithTimestamp)
        #expect(measurement.reading == normal)
        #expect(
            measurement.timestamp
                == (try GATTDateTime(year: 2024, month: 3, day: 15, hours: 10, minutes: 30, seconds: 45)))
        #expect(measurement.measurementStatus == nil)
        #expect(measurement.deviceClockIsNotSet == false)
        #expect(measurement.encode() == spotCheckWithTimestamp)
    }

    @Test("spot-check with every field and the clock-not-set flag")
    func spotCheckEverything() throws {
        let expected = try PLXSpotCheckMeasurement(
            reading: normal,
            timestamp: GATTDateTime(year: 2024, month: 3, day: 15, hours: 10, minutes: 30, seconds: 45),
            measurementStatus: 0x0020, deviceAndSensorStatus: 0x000102,
            pulseAmplitudeIndex: MedicalFloat16(5.5, exponent: -1), deviceClockIsNotSet: true
        )
        try expectCodes(expected, as: spotCheckFull)
    }

    @Test("spot-check without a timestamp puts the status right after the reading")
    func spotCheckNoTimestamp() throws {
        let measurement = try PLXSpotCheckMeasurement.decode([0x02, 0x62, 0x00, 0x48, 0x00, 0x20, 0x00])
        #expect(measurement.timestamp == nil)
        #expect(measurement.measurementStatus == 0x0020)
    }

    @Test("a timestamp with month 13 is refused")
    func badTimestamp() {
        #expect(throws: GATTCodecError.outOfRange(field: "month", value: 13)) {
            try PLXSpotCheckMeasurement.decode([0x01, 0x62, 0x00, 0x48, 0x00, 0xE8, 0x07, 0x0D, 0x0F, 0x0A, 0x1E, 0x2D])
        }
    }

    @Test("a device status wider than 24 bits cannot be made")
    func wideStatus() {
        #expect(throws: GATTCodecError.outOfRange(field: "device and sensor status", value: 0x0100_0000)) {
            try PLXContinuousMeasurement(normal: normal, deviceAndSensorStatus: 0x0100_0000)
        }
    }

    @Test("every truncation is refused")
    func truncation() {
        expectEveryPrefixTruncated(PLXContinuousMeasurement.self, continuousFull)
        expectEveryPrefixTruncated(PLXSpotCheckMeasurement.self, spotCheckFull)
        expectEveryPrefixTruncated(PLXSpotCheckMeasurement.self, spotCheckWithTimestamp)
    }
}
