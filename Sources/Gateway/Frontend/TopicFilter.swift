/// An MQTT topic filter (`wear2mqtt/+/sensor/#`) as a browser subscribes with it: the same wildcards and rules as
/// the broker's (MQTT 5 §4.7), so a page subscribes over the WebSocket exactly as it would over MQTT.
public struct TopicFilter: Hashable, Sendable, CustomStringConvertible {
    public let description: String
    private let levels: [Substring]

    /// Nil for what a broker refuses: empty, over 1,024 bytes, `#` anywhere but alone as the last level, `+` beside
    /// other characters in a level, or a NUL.
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 1024, !text.utf8.contains(0) else { return nil }
        let levels = text.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains("#"), level != "#" || index != levels.count - 1 { return nil }
            if level.contains("+"), level != "+" { return nil }
        }
        self.description = text
        self.levels = levels
    }

    /// Whether `topic` is one this filter receives; as on a broker, a wildcard first level never matches a topic
    /// starting with `$`.
    public func matches(_ topic: String) -> Bool {
        if topic.hasPrefix("$"), let first = levels.first, first == "+" || first == "#" { return false }
        var index = 0
        for level in topic.split(separator: "/", omittingEmptySubsequences: false) {
            guard index < levels.count else { return false }
            let pattern = levels[index]
            if pattern == "#" { return true }
            if pattern != "+", pattern != level { return false }
            index += 1
        }
        // `a/#` also matches `a` itself.
        return index == levels.count || (index == levels.count - 1 && levels[index] == "#")
    }

    public static func == (lhs: TopicFilter, rhs: TopicFilter) -> Bool { lhs.description == rhs.description }
    public func hash(into hasher: inout Hasher) { hasher.combine(description) }
}
