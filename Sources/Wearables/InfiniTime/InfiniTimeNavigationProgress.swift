/// How much of the route is done, in percent, written to the progress characteristic (`00010004-…`) as one byte.
///
/// Sources: `InfiniTimeOrg/InfiniTime` `doc/NavigationService.md` ("Progress": "uint8 … value 0-100") and
/// `src/displayapp/screens/Navigation.cpp` (a bar of range 0…100, drawn in another colour above 90). The
/// firmware stores any byte (`NavigationService::OnCommand`); this type keeps to the documented 0…100.
public struct InfiniTimeNavigationProgress: Hashable, Sendable {
    public let percent: UInt8

    /// Throws `outOfRange` outside 0…100.
    public init(percent: Int) throws(GATTCodecError) {
        guard (0...100).contains(percent) else { throw .outOfRange(field: "navigation progress", value: percent) }
        self.percent = UInt8(percent)
    }

    /// Exactly one byte, 0…100.
    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> InfiniTimeNavigationProgress {
        var reader = ByteReader(bytes)
        let raw = try reader.readUInt8()
        try reader.expectEnd()
        return try InfiniTimeNavigationProgress(percent: Int(raw))
    }

    public func encode() -> [UInt8] { [percent] }
}
