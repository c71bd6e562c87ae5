/// A Temperature Measurement (characteristic 0x2A1C; Health Thermometer Service 1.0, "Temperature
/// Measurement"), indicated once per completed measurement.
///
/// Layout, LE: flags u8, temperature IEEE-11073 FLOAT, then per flags: bit 1 timestamp (Date Time, 7 bytes),
/// bit 2 temperature type u8. Flags bit 0 set means the temperature is in °F, clear in °C. The reading is kept
/// in the unit and precision the device sent, so encode → decode is exact; `celsius` converts.
public struct TemperatureMeasurement: GATTCharacteristicValue {
    public static let characteristicUUID = GATTUUID.Characteristic.temperatureMeasurement

    public enum Unit: Sendable, Hashable {
        case celsius
        case fahrenheit
    }

    public let temperature: MedicalFloat32
    public let unit: Unit
    public let timestamp: GATTDateTime?
    public let temperatureType: TemperatureType?

    public init(
        temperature: MedicalFloat32, unit: Unit, timestamp: GATTDateTime? = nil, temperatureType: TemperatureType? = nil
    ) {
        self.temperature = temperature
        self.unit = unit
        self.timestamp = timestamp
        self.temperatureType = temperatureType
    }

    /// The temperature in °C, or nil when the device sent a special value (NaN, NRes, an infinity).
    public var celsius: Double? {
        guard let reading = temperature.value.doubleValue else { return nil }
        switch unit {
        case .celsius: return reading
        case .fahrenheit: return (reading - 32) * 5 / 9
        }
    }

    private enum Flag {
        static let fahrenheit: UInt8 = 0x01
        static let timestamp: UInt8 = 0x02
        static let temperatureType: UInt8 = 0x04
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> TemperatureMeasurement {
        var reader = ByteReader(bytes)
        let flags = try reader.readUInt8()
        let temperature = MedicalFloat32(bits: try reader.read(UInt32.self))
        let timestamp = flags & Flag.timestamp != 0 ? try GATTDateTime.read(from: &reader) : nil
        let type = flags & Flag.temperatureType != 0 ? TemperatureType(rawValue: try reader.readUInt8()) : nil
        return TemperatureMeasurement(
            temperature: temperature, unit: flags & Flag.fahrenheit != 0 ? .fahrenheit : .celsius,
            timestamp: timestamp, temperatureType: type
        )
    }

    public func encode() -> [UInt8] {
        var flags: UInt8 = unit == .fahrenheit ? Flag.fahrenheit : 0
        if timestamp != nil { flags |= Flag.timestamp }
        if temperatureType != nil { flags |= Flag.temperatureType }

        var writer = ByteWriter()
        writer.write(flags)
        writer.write(temperature.bits)
        timestamp?.write(to: &writer)
        if let temperatureType { writer.write(temperatureType.rawValue) }
        return writer.bytes
    }
}

/// Where on the body a temperature was taken (the Temperature Type characteristic 0x2A1D's values, also sent
/// inside the measurement). Reserved values decode to `.unknown` rather than failing the measurement: the
/// temperature is still good. Two values with the same `rawValue` are equal, so `.unknown(6)` is `.mouth`.
public enum TemperatureType: Sendable, Hashable {
    case armpit, body, ear, finger, gastrointestinalTract, mouth, rectum, toe, tympanum
    case unknown(UInt8)

    public init(rawValue: UInt8) {
        switch rawValue {
        case 1: self = .armpit
        case 2: self = .body
        case 3: self = .ear
        case 4: self = .finger
        case 5: self = .gastrointestinalTract
        case 6: self = .mouth
        case 7: self = .rectum
        case 8: self = .toe
        case 9: self = .tympanum
        default: self = .unknown(rawValue)
        }
    }

    public var rawValue: UInt8 {
        switch self {
        case .armpit: 1
        case .body: 2
        case .ear: 3
        case .finger: 4
        case .gastrointestinalTract: 5
        case .mouth: 6
        case .rectum: 7
        case .toe: 8
        case .tympanum: 9
        case .unknown(let value): value
        }
    }

    public static func == (lhs: TemperatureType, rhs: TemperatureType) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
}
