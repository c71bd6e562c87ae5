/// The motion service's raw acceleration (`00030002-…`, read and notify): x, y, z as three `int16_t`,
/// little-endian — 6 bytes — in "binary milli-g", 1024 counts per g.
///
/// Source: `InfiniTimeOrg/InfiniTime` `doc/MotionService.md` ("Raw motion values") and
/// `src/components/ble/MotionService.cpp` (`OnNewMotionValues` sends `int16_t buffer[3] = {x, y, z}` as it lies in
/// memory). The watch notifies when its motion controller has new values; the protocol fixes no rate and the
/// value carries no time, so the driver timestamps each notification on arrival.
public struct InfiniTimeMotionValues: Hashable, Sendable {
    public static let byteCount = 6
    /// Counts per standard gravity (`doc/MotionService.md`: "1g is represented by a value of 1024").
    public static let countsPerG = 1024.0

    public let x: Int16
    public let y: Int16
    public let z: Int16

    public init(x: Int16, y: Int16, z: Int16) {
        self.x = x
        self.y = y
        self.z = z
    }

    /// In m/s², the unit of the contract's `accelerometer` sensor (1 g = 9.80665 m/s²).
    public var metresPerSecondSquared: (x: Double, y: Double, z: Double) {
        let scale = 9.80665 / Self.countsPerG
        return (Double(x) * scale, Double(y) * scale, Double(z) * scale)
    }

    /// Exactly 6 bytes: fewer or more mean another layout, refused as `truncated`.
    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> InfiniTimeMotionValues {
        var reader = ByteReader(bytes)
        let x = try reader.readInt16()
        let y = try reader.readInt16()
        let z = try reader.readInt16()
        try reader.expectEnd()
        return InfiniTimeMotionValues(x: x, y: y, z: z)
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(x)
        writer.write(y)
        writer.write(z)
        return writer.bytes
    }
}
