/// A button pressed in the watch's music app, notified on the music event characteristic (`00000001-…`) as one
/// byte.
///
/// Sources: `InfiniTimeOrg/InfiniTime` `doc/ble.md` ("Music Control", "Events") and the `EVENT_MUSIC_*` constants of
/// `src/components/ble/MusicService.h`; Gadgetbridge's `PineTimeJFSupport.onCharacteristicChanged`
/// (`Freeyourgadget/Gadgetbridge`) maps the same six buttons. 0x02 is not used. `appOpened` is sent when the music
/// app opens, so the phone can push the current track.
public enum InfiniTimeMusicEvent: UInt8, Hashable, Sendable, CaseIterable {
    case play = 0x00
    case pause = 0x01
    case next = 0x03
    case previous = 0x04
    case volumeUp = 0x05
    case volumeDown = 0x06
    case appOpened = 0xE0

    /// Exactly one byte; an unlisted code is `unknownIdentifier`, more bytes `truncated`.
    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> InfiniTimeMusicEvent {
        var reader = ByteReader(bytes)
        let raw = try reader.readUInt8()
        try reader.expectEnd()
        guard let event = InfiniTimeMusicEvent(rawValue: raw) else {
            throw .unknownIdentifier(field: "music event", value: Int(raw))
        }
        return event
    }

    public func encode() -> [UInt8] { [rawValue] }
}
