/// Artist (`00000003-…`), track (`00000004-…`) or album (`00000005-…`) for the watch's music app: UTF-8, at most
/// 40 bytes.
///
/// Source: `InfiniTimeOrg/InfiniTime` `src/components/ble/MusicService.cpp` (`MaxStringSize {40}` since 1.9; in
/// `OnCommand` a longer write keeps its first 40 bytes and overwrites the last three with "..." — which can cut a
/// multi-byte character in two). The encoder does that shortening itself, between two characters, so the watch
/// never has to: longer text becomes its first characters that fit in 37 bytes, then "...". `doc/ble.md` ("Artist,
/// Track, and Album"): "send a UTF-8 encoded string".
///
/// `decode` reads what the firmware keeps (the same 40-byte rule, up to the first NUL), for the simulator.
public struct InfiniTimeMusicText: Hashable, Sendable {
    public static let maximumByteCount = 40
    /// What replaces the end of a text that was too long, as the firmware writes it.
    public static let truncationMarker = "..."

    /// At most 40 UTF-8 bytes, no NUL.
    public let text: String

    /// `text` fitted to 40 bytes (NUL characters dropped: the watch would end the string there).
    public init(_ text: String) {
        self.text = InfiniTimeText.fitted(text, maximumByteCount: Self.maximumByteCount, marker: Self.truncationMarker)
    }

    /// Whether `text` is longer than the watch keeps, so the value holds a shortened copy.
    public static func isTruncated(_ text: String) -> Bool { InfiniTimeMusicText(text).text != text }

    /// The text the firmware would store: longer writes are cut to 40 bytes ending "...", and the text ends at
    /// the first NUL. Bytes that are not UTF-8 are `invalidUTF8`. An empty write is an empty text, as on the watch.
    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> InfiniTimeMusicText {
        var kept = Array(bytes.prefix(maximumByteCount))
        if bytes.count > maximumByteCount {
            kept.replaceSubrange((maximumByteCount - 3)..., with: Array(truncationMarker.utf8))
        }
        return InfiniTimeMusicText(verbatim: try InfiniTimeText.decode(kept))
    }

    private init(verbatim: String) { text = verbatim }

    public func encode() -> [UInt8] { Array(text.utf8) }
}
