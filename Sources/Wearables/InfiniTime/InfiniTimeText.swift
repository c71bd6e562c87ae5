/// Text as InfiniTime's C strings hold it: UTF-8 without NUL, cut to a byte budget only between two characters.
///
/// The firmware copies a string characteristic into a fixed buffer and stops at the first NUL, so a NUL would end
/// the text early and a cut in the middle of a multi-byte character would leave the watch an invalid sequence to
/// draw. Every InfiniTime text encoder goes through here.
enum InfiniTimeText {
    /// `text` without NUL characters, shortened to at most `maximumByteCount` UTF-8 bytes by dropping whole
    /// characters (grapheme clusters, so an accent or an emoji's joiner is never separated from its base) from
    /// the end; when anything was dropped, `marker` (ASCII) ends the result within the same budget.
    static func fitted(_ text: String, maximumByteCount: Int, marker: String = "") -> String {
        let clean = text.unicodeScalars.contains("\0")
            ? String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != "\0" })) : text
        guard clean.utf8.count > maximumByteCount else { return clean }
        let budget = max(0, maximumByteCount - marker.utf8.count)
        var result = ""
        var used = 0
        for character in clean {
            let size = character.utf8.count
            guard used + size <= budget else { break }
            result.append(character)
            used += size
        }
        return result + marker
    }

    /// The bytes up to the first NUL (the C string the firmware would see), as UTF-8.
    static func decode(_ bytes: some Collection<UInt8>) throws(GATTCodecError) -> String {
        let visible = bytes.prefix { $0 != 0 }
        guard let text = String(validating: visible, as: UTF8.self) else { throw .invalidUTF8 }
        return text
    }
}
