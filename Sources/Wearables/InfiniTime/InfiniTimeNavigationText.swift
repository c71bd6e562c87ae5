/// The navigation app's narrative (`00010002-…`, "At the roundabout take the first exit") or maneuver distance
/// (`00010003-…`, "50 m"): UTF-8 text.
///
/// Source: `InfiniTimeOrg/InfiniTime` `doc/NavigationService.md` and `src/components/ble/NavigationService.cpp`
/// (`OnCommand` copies the whole write into a stack buffer and keeps it up to the first NUL; there is no length
/// check of its own). The only limit is NimBLE's largest attribute value, `BLE_ATT_ATTR_MAX_LEN` = 512 bytes
/// (`src/libs/mynewt-nimble/nimble/host/include/host/ble_att.h`), so the encoder fits text to 512 bytes between
/// two characters. The screen shows the narrative in an 80-pixel-high label that ends with "…" when it
/// overflows (`LV_LABEL_LONG_DOT` in `Navigation.cpp`), so short text reads best.
public struct InfiniTimeNavigationText: Hashable, Sendable {
    public static let maximumByteCount = 512

    /// At most 512 UTF-8 bytes, no NUL.
    public let text: String

    /// `text` fitted to 512 bytes (NUL characters dropped: the watch would end the string there).
    public init(_ text: String) {
        self.text = InfiniTimeText.fitted(text, maximumByteCount: Self.maximumByteCount, marker: "...")
    }

    private init(verbatim: String) { text = verbatim }

    /// Up to the first NUL, as the firmware keeps it; longer than 512 bytes is `truncated` (NimBLE refuses such
    /// a write), not UTF-8 `invalidUTF8`.
    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> InfiniTimeNavigationText {
        guard bytes.count <= maximumByteCount else {
            throw .truncated(expected: maximumByteCount, actual: bytes.count)
        }
        return InfiniTimeNavigationText(verbatim: try InfiniTimeText.decode(bytes))
    }

    public func encode() -> [UInt8] { Array(text.utf8) }
}
