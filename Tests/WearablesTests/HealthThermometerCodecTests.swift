import Testing
import Wearables

@Suite("Health Thermometer")
struct HealthThermometerCodecTests {
    /// °C, timestamp and type: 36.6 °C (FLOAT 0xFF00016E) in the mouth at 2024-03-15 10:30:45.
    let full: [UInt8] = [0x06, 0x6E, 0x01, 0x00, 0xFF, 0xE8, 0x07, 0x03, 0x0F, 0x0A, 0x1E, 0x2D, 0x06]

    @Test("°F (flags bit 0) is converted: 212 °F is 100 °C")
    func fahrenheitExact() throws {
        // FLOAT 0x000000D4: exponent 0, mantissa 212.
        let measurement = try TemperatureMeasurement.decode([0x01, 0xD4, 0x00, 0x00, 0x00])
        #expect(measurement.unit == .fahrenheit)
        #expect(measurement.temperature.value == .value(212))
        #expect(measurement.celsius == 100)
    }

    @Test("98.6 °F is 37 °C")
    func fahrenheitBody() throws {
        // FLOAT 0xFF0003DA: exponent −1, mantissa 986.
        let measurement = try TemperatureMeasurement.decode([0x01, 0xDA, 0x03, 0x00, 0xFF])
        #expect(measurement.temperature.value == .value(98.6))
        let celsius = try #require(measurement.celsius)
        #expect(abs(celsius - 37) < 1e-9)
    }

    @Test("°C with timestamp and temperature type")
    func everything() throws {
        let measurement = try TemperatureMeasurement.decode(full)
        #expect(measurement.unit == .celsius)
        #expect(measurement.celsius == 36.6)
        #expect(
            measurement.timestamp
                == (try GATTDateTime(year: 2024, month: 3, day: 15, hours: 10, minutes: 30, seconds: 45)))
        #expect(measurement.temperatureType == .mouth)
        #expect(measurement.encode() == full)
    }

    @Test("the type follows the temperature directly when there is no timestamp")
    func typeWithoutTimestamp() throws {
        let measurement = try TemperatureMeasurement.decode([0x04, 0x6E, 0x01, 0x00, 0xFF, 0x01])
        #expect(measurement.timestamp == nil)
        #expect(measurement.temperatureType == .armpit)
        #expect(
            try TemperatureMeasurement.decode([0x04, 0x6E, 0x01, 0x00, 0xFF, 0x0A]).temperatureType == .unknown(10))
    }

    @Test("a special value gives no Celsius reading")
    func special() throws {
        let measurement = try TemperatureMeasurement.decode([0x00, 0xFF, 0xFF, 0x7F, 0x00])
        #expect(measurement.temperature.value == .nan)
        #expect(measurement.celsius == nil)
    }

    @Test("encoding derives the flags; 37.25 °C at exponent −2")
    func encodes() throws {
        let measurement = TemperatureMeasurement(temperature: try MedicalFloat32(37.25, exponent: -2), unit: .celsius)
        // 3725 = 0x000E8D, exponent −2 = 0xFE.
        try expectCodes(measurement, as: [0x00, 0x8D, 0x0E, 0x00, 0xFE])
        #expect(measurement.celsius == 37.25)
    }

    @Test("every truncation is refused")
    func truncation() {
        expectEveryPrefixTruncated(TemperatureMeasurement.self, full)
    }
}
