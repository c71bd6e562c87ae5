/// The music service's repeat (`0000000b-…`) and shuffle (`0000000c-…`) switches: one byte, 1 on, 0 off.
///
/// Source: `InfiniTimeOrg/InfiniTime` `src/components/ble/MusicService.cpp` (`OnCommand`: `repeat = s[0]`,
/// `shuffle = s[0]`, any non-zero byte is on). The firmware keeps both but `MusicService.h` has no getter for them,
/// so nothing on the watch shows them yet.
/// Gadgetbridge (`PineTimeJFSupport.onSetMusicState`) writes a 4-byte big-endian int here, whose first byte is 0
/// for 0 and 1 alike — so the watch always reads "off"; the one-byte form is what the firmware reads.
public struct InfiniTimeMusicFlag: Hashable, Sendable {
    public let isOn: Bool

    public init(_ isOn: Bool) { self.isOn = isOn }

    /// Exactly one byte, 0 or 1; another value is `reservedValue`.
    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> InfiniTimeMusicFlag {
        var reader = ByteReader(bytes)
        let isOn = try reader.readFlag(field: "music flag")
        try reader.expectEnd()
        return InfiniTimeMusicFlag(isOn)
    }

    public func encode() -> [UInt8] { [isOn ? 1 : 0] }
}
