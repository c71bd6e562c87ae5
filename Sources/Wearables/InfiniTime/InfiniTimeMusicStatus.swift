/// Whether the phone is playing, written to the music status characteristic (`00000002-…`) as one byte.
///
/// Sources: `InfiniTimeOrg/InfiniTime` `doc/ble.md` ("Status": 0x01 playing, 0x00 paused) and
/// `src/components/ble/MusicService.h` (`MusicStatus`). The firmware's `OnCommand` takes any non-zero first byte
/// as playing and starts advancing the position by itself at the playback speed; the decoder here is strict
/// (0 or 1) so the simulator catches a driver writing anything else.
public enum InfiniTimeMusicStatus: UInt8, Hashable, Sendable, CaseIterable {
    case notPlaying = 0x00
    case playing = 0x01

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> InfiniTimeMusicStatus {
        var reader = ByteReader(bytes)
        let raw = try reader.readUInt8()
        try reader.expectEnd()
        guard let status = InfiniTimeMusicStatus(rawValue: raw) else {
            throw .reservedValue(field: "music status", value: Int(raw))
        }
        return status
    }

    public func encode() -> [UInt8] { [rawValue] }
}
