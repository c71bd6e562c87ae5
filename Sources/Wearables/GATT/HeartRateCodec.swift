/// One Heart Rate Measurement notification (characteristic 0x2A37; Heart Rate Service 1.0, "Heart Rate
/// Measurement", and the GATT Specification Supplement's entry of the same name).
///
/// Layout, little-endian: flags u8, heart rate u8 or u16 (flags bit 0), energy expended u16 kJ (bit 3), then
/// RR intervals u16 in 1/1024 s (bit 4) filling the rest of the value. Sensor contact is flags bits 1–2.
///
/// RR intervals are kept as the raw 1/1024 s counts so that encode → decode is exact; `rrIntervals` (seconds)
/// and `rrIntervalsMilliseconds` are exact conversions of them. A lone byte after the last whole RR interval is
/// ignored: the specification says the intervals are "as many as fit", and dropping a whole heart-rate sample
/// over a stray byte would lose the bpm too.
public struct HeartRateMeasurement: GATTCharacteristicValue {
    public static let characteristicUUID = GATTUUID.Characteristic.heartRateMeasurement

    /// Beats per minute, 0…65535.
    public let bpm: Int
    /// Whether the sensor touches the skin; nil when the sensor cannot tell (contact bits 0b00 or 0b01).
    public let contact: Bool?
    /// Energy expended since the last reset, kJ, 0…65535 (the sensor stops at 65535).
    public let energyExpendedKJ: Int?
    /// RR intervals in the wire unit, 1/1024 s, oldest first.
    public let rawRRIntervals: [UInt16]

    /// Throws `outOfRange` for a bpm or energy outside 0…65535.
    public init(
        bpm: Int, contact: Bool? = nil, energyExpendedKJ: Int? = nil, rawRRIntervals: [UInt16] = []
    ) throws(GATTCodecError) {
        guard (0...Int(UInt16.max)).contains(bpm) else { throw .outOfRange(field: "bpm", value: bpm) }
        if let energyExpendedKJ, !(0...Int(UInt16.max)).contains(energyExpendedKJ) {
            throw .outOfRange(field: "energy expended", value: energyExpendedKJ)
        }
        self.bpm = bpm
        self.contact = contact
        self.energyExpendedKJ = energyExpendedKJ
        self.rawRRIntervals = rawRRIntervals
    }

    /// RR intervals in seconds.
    public var rrIntervals: [Double] { rawRRIntervals.map { Double($0) / 1024 } }

    /// RR intervals in milliseconds, as the MQTT `heart_rate` sample's `rr_ms` carries them.
    public var rrIntervalsMilliseconds: [Double] { rawRRIntervals.map { Double($0) * 1000 / 1024 } }

    private enum Flag {
        static let valueIsUInt16: UInt8 = 0x01
        static let contactSupported: UInt8 = 0x04
        static let contactDetected: UInt8 = 0x02
        static let energyExpended: UInt8 = 0x08
        static let rrIntervals: UInt8 = 0x10
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> HeartRateMeasurement {
        var reader = ByteReader(bytes)
        let flags = try reader.readUInt8()
        let bpm = flags & Flag.valueIsUInt16 != 0 ? Int(try reader.read(UInt16.self)) : Int(try reader.readUInt8())
        let contact: Bool? = flags & Flag.contactSupported != 0 ? flags & Flag.contactDetected != 0 : nil
        let energy = flags & Flag.energyExpended != 0 ? Int(try reader.read(UInt16.self)) : nil
        var intervals: [UInt16] = []
        if flags & Flag.rrIntervals != 0 {
            while reader.remainingCount >= 2 { intervals.append(try reader.read(UInt16.self)) }
        }
        return try HeartRateMeasurement(bpm: bpm, contact: contact, energyExpendedKJ: energy, rawRRIntervals: intervals)
    }

    /// The heart rate as u8 when it fits, as the specification recommends to save air time.
    public func encode() -> [UInt8] { encode(alwaysUInt16: false) }

    /// `alwaysUInt16` sends the heart rate as u16 even when it fits a byte, as some sensors do.
    public func encode(alwaysUInt16: Bool) -> [UInt8] {
        let wide = alwaysUInt16 || bpm > Int(UInt8.max)
        var flags: UInt8 = wide ? Flag.valueIsUInt16 : 0
        if let contact { flags |= Flag.contactSupported | (contact ? Flag.contactDetected : 0) }
        if energyExpendedKJ != nil { flags |= Flag.energyExpended }
        if !rawRRIntervals.isEmpty { flags |= Flag.rrIntervals }

        var writer = ByteWriter()
        writer.write(flags)
        if wide { writer.write(UInt16(truncatingIfNeeded: bpm)) } else { writer.write(UInt8(truncatingIfNeeded: bpm)) }
        if let energyExpendedKJ { writer.write(UInt16(truncatingIfNeeded: energyExpendedKJ)) }
        for interval in rawRRIntervals { writer.write(interval) }
        return writer.bytes
    }
}

/// Where a heart-rate sensor sits (characteristic 0x2A38; Heart Rate Service 1.0, "Body Sensor Location").
///
/// Values the specification reserves decode to `.unknown` rather than failing: the location is a label, and a
/// newer sensor's label must not stop the gateway from using the sensor. Two values with the same `rawValue` are
/// equal, so `.unknown(1)` is `.chest` and encode → decode is exact for every value.
public enum BodySensorLocation: GATTCharacteristicValue, Hashable {
    case other, chest, wrist, finger, hand, earLobe, foot
    case unknown(UInt8)

    public static let characteristicUUID = GATTUUID.Characteristic.bodySensorLocation

    public init(rawValue: UInt8) {
        switch rawValue {
        case 0: self = .other
        case 1: self = .chest
        case 2: self = .wrist
        case 3: self = .finger
        case 4: self = .hand
        case 5: self = .earLobe
        case 6: self = .foot
        default: self = .unknown(rawValue)
        }
    }

    public var rawValue: UInt8 {
        switch self {
        case .other: 0
        case .chest: 1
        case .wrist: 2
        case .finger: 3
        case .hand: 4
        case .earLobe: 5
        case .foot: 6
        case .unknown(let value): value
        }
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> BodySensorLocation {
        var reader = ByteReader(bytes)
        return BodySensorLocation(rawValue: try reader.readUInt8())
    }

    public func encode() -> [UInt8] { [rawValue] }

    public static func == (lhs: BodySensorLocation, rhs: BodySensorLocation) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
}

/// A write to the Heart Rate Control Point (characteristic 0x2A39; Heart Rate Service 1.0, "Heart Rate Control
/// Point"). Decoding is for the simulator, which must answer an unknown command the way a sensor would: the
/// service answers any other value with ATT error 0x80 "Control Point value not supported".
public enum HeartRateControlPointCommand: GATTCharacteristicValue {
    /// Sets energy expended back to 0.
    case resetEnergyExpended

    public static let characteristicUUID = GATTUUID.Characteristic.heartRateControlPoint

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> HeartRateControlPointCommand {
        var reader = ByteReader(bytes)
        let opcode = try reader.readUInt8()
        guard opcode == 0x01 else { throw .reservedValue(field: "heart rate control point", value: Int(opcode)) }
        return .resetEnergyExpended
    }

    public func encode() -> [UInt8] { [0x01] }
}
