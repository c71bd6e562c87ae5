#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import FoundationEssentials
#endif

/// ESPHome's `api.encryption.key`: 32 random bytes written in base64 (44 characters), as the device's YAML and Home
/// Assistant show it.
public enum EncryptionKey {
    /// The 32 bytes, or nil when `text` is not base64 of 32 bytes.
    public static func parse(base64 text: String) -> [UInt8]? {
        let start = text.firstIndex { !$0.isWhitespace } ?? text.endIndex
        let end = text.lastIndex { !$0.isWhitespace }.map(text.index(after:)) ?? start
        guard let data = Data(base64Encoded: String(text[start..<end])), data.count == 32 else { return nil }
        return Array(data)
    }

    public static func base64(_ key: [UInt8]) -> String { Data(key).base64EncodedString() }
}
