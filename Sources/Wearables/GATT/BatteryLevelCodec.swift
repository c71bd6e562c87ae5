/// The charge left, 0…100 % (characteristic 0x2A19; Battery Service 1.0, "Battery Level").
///
/// The specification reserves 101–255; a device sending one is faulty, and publishing "battery 180 %" would be
/// worse than publishing nothing, so decoding throws `outOfRange`.
public struct BatteryLevel: GATTCharacteristicValue, Hashable {
    public static let characteristicUUID = GATTUUID.Characteristic.batteryLevel

    public let percent: Int

    public init(percent: Int) throws(GATTCodecError) {
        guard (0...100).contains(percent) else { throw .outOfRange(field: "battery level", value: percent) }
        self.percent = percent
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> BatteryLevel {
        var reader = ByteReader(bytes)
        return try BatteryLevel(percent: Int(try reader.readUInt8()))
    }

    public func encode() -> [UInt8] { [UInt8(truncatingIfNeeded: percent)] }
}
