/// The battery characteristic (0x3EB3): one byte, the charge left in percent.
///
/// Reverse-engineered: the original `ismaelwarnants` `main.py` (as kept in `mountainaught/e4-python-server` at
/// commit 5467d148, `handle_battery`) unpacks exactly one unsigned byte and prints it as a percentage, and
/// Gadgetbridge's `EmpaticaE4DeviceSupport` reads the first byte as the level in percent. The EmpaLink SDK
/// reports the same thing as a fraction 0.0…1.0 (`fraction`). Neither source says whether the E4 ever sends
/// more than 100, so, as for the standard Battery Level, a value above 100 is refused as `outOfRange` rather
/// than published as "battery 180 %"; a longer value is refused as `outOfRange` of the length.
public struct E4BatteryLevel: GATTCharacteristicValue, Hashable {
    public static let characteristicUUID = E4UUID.Short.battery

    public let percent: UInt8

    public init(percent: UInt8) throws(GATTCodecError) {
        guard percent <= 100 else { throw .outOfRange(field: "E4 battery level", value: Int(percent)) }
        self.percent = percent
    }

    /// What the EmpaLink SDK's `didReceiveBatteryLevel:` reports: 0.0…1.0.
    public var fraction: Double { Double(percent) / 100 }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> E4BatteryLevel {
        var reader = ByteReader(bytes)
        let percent = try reader.readUInt8()
        guard reader.isAtEnd else { throw .outOfRange(field: "E4 battery value length", value: bytes.count) }
        return try E4BatteryLevel(percent: percent)
    }

    public func encode() -> [UInt8] { [percent] }
}
