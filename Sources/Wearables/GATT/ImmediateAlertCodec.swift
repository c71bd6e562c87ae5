/// How loudly a device should alert (characteristic 0x2A06; Immediate Alert Service 1.0, "Alert Level").
/// Written without response, so a bad value is never reported back by the device: the simulator decodes what
/// it receives and refuses 3–255, which the specification reserves.
public enum AlertLevel: UInt8, GATTCharacteristicValue, Hashable, CaseIterable {
    case none = 0
    case mild = 1
    case high = 2

    public static let characteristicUUID = GATTUUID.Characteristic.alertLevel

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> AlertLevel {
        var reader = ByteReader(bytes)
        let raw = try reader.readUInt8()
        guard let level = AlertLevel(rawValue: raw) else { throw .reservedValue(field: "alert level", value: Int(raw)) }
        return level
    }

    public func encode() -> [UInt8] { [rawValue] }
}

extension AlertLevel {
    /// The contract's name of a level (`find`'s `level`).
    public var name: String {
        switch self {
        case .none: "none"
        case .mild: "mild"
        case .high: "high"
        }
    }

    /// The level a contract name means; nil for any other text.
    public init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = level
    }
}
