import Testing
import Wearables

/// One RSC vector: speed 0x0300 = 768/256 = 3 m/s, cadence 0xAA = 170/min, then per flags stride 0x007D = 1.25 m
/// and distance 0x00003039 = 12345 × 0.1 m = 1234.5 m.
struct RSCVector: Sendable, CustomTestStringConvertible {
    let bytes: [UInt8]
    let stride: Double?
    let distance: Double?
    let running: Bool
    var testDescription: String { "flags 0x0\(bytes[0])" }
}

@Suite("Running Speed and Cadence")
struct RunningSpeedCadenceCodecTests {
    static let vectors: [RSCVector] = [
        RSCVector(bytes: [0x00, 0x00, 0x03, 0xAA], stride: nil, distance: nil, running: false),
        RSCVector(bytes: [0x01, 0x00, 0x03, 0xAA, 0x7D, 0x00], stride: 1.25, distance: nil, running: false),
        RSCVector(bytes: [0x02, 0x00, 0x03, 0xAA, 0x39, 0x30, 0x00, 0x00], stride: nil, distance: 1234.5, running: false),
        RSCVector(
            bytes: [0x03, 0x00, 0x03, 0xAA, 0x7D, 0x00, 0x39, 0x30, 0x00, 0x00], stride: 1.25, distance: 1234.5,
            running: false
        ),
        RSCVector(bytes: [0x04, 0x00, 0x03, 0xAA], stride: nil, distance: nil, running: true),
        RSCVector(bytes: [0x05, 0x00, 0x03, 0xAA, 0x7D, 0x00], stride: 1.25, distance: nil, running: true),
        RSCVector(bytes: [0x06, 0x00, 0x03, 0xAA, 0x39, 0x30, 0x00, 0x00], stride: nil, distance: 1234.5, running: true),
        RSCVector(
            bytes: [0x07, 0x00, 0x03, 0xAA, 0x7D, 0x00, 0x39, 0x30, 0x00, 0x00], stride: 1.25, distance: 1234.5,
            running: true
        ),
    ]

    @Test("every flag combination decodes, re-encodes byte for byte, and refuses every truncation", arguments: vectors)
    func flagCombination(_ vector: RSCVector) throws {
        let measurement = try RunningSpeedCadenceMeasurement.decode(vector.bytes)
        #expect(measurement.speedMetresPerSecond == 3)
        #expect(measurement.cadenceStepsPerMinute == 170)
        #expect(measurement.strideLengthMetres == vector.stride)
        #expect(measurement.totalDistanceMetres == vector.distance)
        #expect(measurement.isRunning == vector.running)
        #expect(measurement.encode() == vector.bytes)
        expectEveryPrefixTruncated(RunningSpeedCadenceMeasurement.self, vector.bytes)
    }

    @Test("the SI initializer rounds to the wire units")
    func siInitializer() throws {
        let measurement = try RunningSpeedCadenceMeasurement(
            speedMetresPerSecond: 3.1, cadenceStepsPerMinute: 172, strideLengthMetres: 1.234, totalDistanceMetres: 5000,
            isRunning: true
        )
        // 3.1 × 256 = 793.6 → 794 = 0x031A; 1.234 m → 123 = 0x7B; 5000 m → 50000 = 0x0000C350.
        try expectCodes(measurement, as: [0x07, 0x1A, 0x03, 0xAC, 0x7B, 0x00, 0x50, 0xC3, 0x00, 0x00])
        #expect(measurement.speedMetresPerSecond == 794.0 / 256)
    }

    @Test("values the wire cannot carry are refused")
    func refuses() {
        #expect(throws: GATTCodecError.outOfRange(field: "speed", value: 65536)) {
            try RunningSpeedCadenceMeasurement(speedMetresPerSecond: 256, cadenceStepsPerMinute: 0, isRunning: true)
        }
        #expect(throws: GATTCodecError.outOfRange(field: "cadence", value: 256)) {
            try RunningSpeedCadenceMeasurement(speedMetresPerSecond: 1, cadenceStepsPerMinute: 256, isRunning: true)
        }
        #expect(throws: GATTCodecError.self) {
            try RunningSpeedCadenceMeasurement(speedMetresPerSecond: -1, cadenceStepsPerMinute: 0, isRunning: false)
        }
        #expect(throws: GATTCodecError.self) {
            try RunningSpeedCadenceMeasurement(speedMetresPerSecond: .nan, cadenceStepsPerMinute: 0, isRunning: false)
        }
    }
}
