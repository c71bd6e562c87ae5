/// An RSC Measurement (characteristic 0x2A53; Running Speed and Cadence Service 1.0, "RSC Measurement"), from
/// a foot pod or a watch.
///
/// Layout, LE: flags u8, instantaneous speed u16 (1/256 m/s), instantaneous cadence u8 (steps per minute), then
/// per flags: bit 0 instantaneous stride length u16 (1/100 m), bit 1 total distance u32 (1/10 m); flags bit 2
/// set means running, clear walking. Values are stored in those wire units so encode → decode is exact; the
/// SI properties convert, and the SI initializer rounds to the nearest wire unit.
public struct RunningSpeedCadenceMeasurement: GATTCharacteristicValue {
    public static let characteristicUUID = GATTUUID.Characteristic.rscMeasurement

    /// 1/256 m/s.
    public let rawSpeed: UInt16
    public let cadenceStepsPerMinute: UInt8
    /// 1/100 m.
    public let rawStrideLength: UInt16?
    /// 1/10 m.
    public let rawTotalDistance: UInt32?
    public let isRunning: Bool

    public init(
        rawSpeed: UInt16, cadenceStepsPerMinute: UInt8, rawStrideLength: UInt16? = nil, rawTotalDistance: UInt32? = nil,
        isRunning: Bool
    ) {
        self.rawSpeed = rawSpeed
        self.cadenceStepsPerMinute = cadenceStepsPerMinute
        self.rawStrideLength = rawStrideLength
        self.rawTotalDistance = rawTotalDistance
        self.isRunning = isRunning
    }

    /// Rounds each value to its wire unit; throws `outOfRange` (with the value in wire units) when it does not fit.
    public init(
        speedMetresPerSecond: Double, cadenceStepsPerMinute: Int, strideLengthMetres: Double? = nil,
        totalDistanceMetres: Double? = nil, isRunning: Bool
    ) throws(GATTCodecError) {
        guard let cadence = UInt8(exactly: cadenceStepsPerMinute) else {
            throw .outOfRange(field: "cadence", value: cadenceStepsPerMinute)
        }
        self.init(
            rawSpeed: try wireUnits(speedMetresPerSecond, per: 256, field: "speed"),
            cadenceStepsPerMinute: cadence,
            rawStrideLength: try strideLengthMetres.map { (metres) throws(GATTCodecError) in
                try wireUnits(metres, per: 100, field: "stride length")
            },
            rawTotalDistance: try totalDistanceMetres.map { (metres) throws(GATTCodecError) in
                try wireUnits(metres, per: 10, field: "total distance")
            },
            isRunning: isRunning
        )
    }

    public var speedMetresPerSecond: Double { Double(rawSpeed) / 256 }
    public var strideLengthMetres: Double? { rawStrideLength.map { Double($0) / 100 } }
    public var totalDistanceMetres: Double? { rawTotalDistance.map { Double($0) / 10 } }

    private enum Flag {
        static let strideLength: UInt8 = 0x01
        static let totalDistance: UInt8 = 0x02
        static let running: UInt8 = 0x04
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> RunningSpeedCadenceMeasurement {
        var reader = ByteReader(bytes)
        let flags = try reader.readUInt8()
        let speed = try reader.read(UInt16.self)
        let cadence = try reader.readUInt8()
        let stride = flags & Flag.strideLength != 0 ? try reader.read(UInt16.self) : nil
        let distance = flags & Flag.totalDistance != 0 ? try reader.read(UInt32.self) : nil
        return RunningSpeedCadenceMeasurement(
            rawSpeed: speed, cadenceStepsPerMinute: cadence, rawStrideLength: stride, rawTotalDistance: distance,
            isRunning: flags & Flag.running != 0
        )
    }

    public func encode() -> [UInt8] {
        var flags: UInt8 = isRunning ? Flag.running : 0
        if rawStrideLength != nil { flags |= Flag.strideLength }
        if rawTotalDistance != nil { flags |= Flag.totalDistance }

        var writer = ByteWriter()
        writer.write(flags)
        writer.write(rawSpeed)
        writer.write(cadenceStepsPerMinute)
        if let rawStrideLength { writer.write(rawStrideLength) }
        if let rawTotalDistance { writer.write(rawTotalDistance) }
        return writer.bytes
    }
}

/// `value` in units of 1/`unitsPerOne`, rounded to the nearest, or `outOfRange` when it is negative, not finite
/// or too large for `Raw`.
private func wireUnits<Raw: FixedWidthInteger & UnsignedInteger>(
    _ value: Double, per unitsPerOne: Double, field: String
) throws(GATTCodecError) -> Raw {
    let scaled = (value * unitsPerOne).rounded()
    guard let raw = Raw(exactly: scaled) else {
        throw .outOfRange(field: field, value: scaled.isFinite ? Int(max(min(scaled, 1e15), -1e15)) : -1)
    }
    return raw
}
