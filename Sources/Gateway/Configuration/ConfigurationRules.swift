/// The value rules shared by several keys. Each returns `nil` when the value is fine, else the message.
///
/// They follow the MQTT contract: only `[A-Za-z0-9_-]` may appear in a topic segment, and `bridge` is
/// reserved. Rejecting such names here, at start-up, beats publishing to a topic nobody can subscribe to.
enum ConfigurationRules {
    static let segmentCharacters = "A-Z, a-z, 0-9, _ and -"

    static func isTopicSegment<S: StringProtocol>(_ text: S) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isSegmentByte)
    }

    private static func isSegmentByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    /// A name that becomes one topic segment (gateway id, device name, driver name).
    static func segmentProblem(_ text: String, maxLength: Int? = nil) -> String? {
        if text.isEmpty { return "must not be empty" }
        if let maxLength, text.utf8.count > maxLength {
            return "must be at most \(maxLength) characters, got \(text.utf8.count)"
        }
        if !isTopicSegment(text) {
            return "may only contain \(segmentCharacters), got \"\(text)\""
        }
        return nil
    }

    /// `mqtt.base_topic`: one or more segments joined by `/`, with no wildcards.
    static func baseTopicProblem(_ topic: String) -> String? {
        if topic.isEmpty { return "must not be empty" }
        if topic.contains("+") || topic.contains("#") {
            return "must not contain the MQTT wildcards + or #, got \"\(topic)\""
        }
        if topic.hasPrefix("/") || topic.hasSuffix("/") {
            return "must not start or end with '/', got \"\(topic)\""
        }
        let segments = topic.split(separator: "/", omittingEmptySubsequences: false)
        if segments.contains(where: \.isEmpty) {
            return "must not contain an empty level ('//'), got \"\(topic)\""
        }
        if !segments.allSatisfy(isTopicSegment) {
            return "may only contain \(segmentCharacters) in each '/'-separated level, got \"\(topic)\""
        }
        return nil
    }

    /// `AA:BB:CC:DD:EE:FF` in either case, returned in upper case; `nil` when malformed.
    static func normalisedBluetoothAddress(_ text: String) -> String? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6,
            parts.allSatisfy({ $0.utf8.count == 2 && $0.allSatisfy(\.isHexDigit) })
        else { return nil }
        return text.uppercased()
    }

    /// `hci0`, `hci12`: the kernel's name for a Bluetooth controller.
    static func isAdapterName(_ text: String) -> Bool {
        guard text.hasPrefix("hci") else { return false }
        let number = text.dropFirst(3)
        return !number.isEmpty && number.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// An MQTT client identifier: a non-empty UTF-8 string of at most 65535 bytes without control characters.
    static func clientIDProblem(_ id: String) -> String? {
        if id.isEmpty { return "must not be empty; leave it out to use the derived default" }
        if id.utf8.count > 65535 { return "must be at most 65535 bytes, got \(id.utf8.count)" }
        if id.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "must not contain control characters"
        }
        return nil
    }
}
