/// Which MQTT 5 Response Topics the gateway publishes an answer to.
///
/// A Response Topic is chosen by whoever sends the request, so without a rule any client allowed to publish a
/// request could make the gateway publish, under its own name, on topics other clients trust: `bridge/state`, a
/// device's availability or state, a request topic (which the gateway would then execute), `$SYS`, or Home
/// Assistant's discovery topics. The rule: a Response Topic is accepted only
/// - under the requester's own response level, `<base>/bridge/response/…` for a bridge request and
///   `<base>/<id>/response/…` for a request to device `<id>`; or
/// - outside `<base>/` and outside the Home Assistant discovery prefix, and not a `$` topic;
/// and in either case without wildcards, empty levels, control or invisible formatting characters, and at most
/// ``maxLength`` bytes long. It does not check who may read the topic: that is the broker's ACL.
public struct ResponseTopicRule: Sendable, Equatable {
    /// Long enough for any sane reply inbox (a client id and a UUID), short enough to not be a payload.
    public static let maxLength = 256

    public let layout: TopicLayout
    /// Prefixes outside the base the gateway publishes to itself: Home Assistant's discovery prefix when enabled.
    public let ownedPrefixes: [String]

    public init(layout: TopicLayout, ownedPrefixes: [String] = []) {
        self.layout = layout
        self.ownedPrefixes = ownedPrefixes
    }

    /// `nil` when `topic` may carry the answer to a request for `target`, else why not (a sentence naming the
    /// allowed places, never echoing the topic).
    public func problem(_ topic: String, for target: ContractRequest.Target) -> String? {
        let outside = "outside \(layout.base)/" + ownedPrefixes.map { " and \($0)/" }.joined()
        let rule = "an MQTT 5 Response Topic must be " + (ownResponseLevel(target).map { "under \($0)/ or " } ?? "") + outside
        if topic.isEmpty || topic.utf8.count > Self.maxLength {
            return "\(rule), with 1 to \(Self.maxLength) bytes"
        }
        if topic.unicodeScalars.contains(where: { $0 == "+" || $0 == "#" }) {
            return "\(rule), without the wildcards + and #"
        }
        if topic.unicodeScalars.contains(where: Self.isInvisible) {
            return "\(rule), without control or invisible formatting characters"
        }
        if topic.split(separator: "/", omittingEmptySubsequences: false).contains(where: \.isEmpty) {
            return "\(rule), without empty levels (a leading, trailing or double '/')"
        }
        if topic.hasPrefix("$") {
            return "\(rule); $ topics belong to the broker"
        }
        if let own = ownResponseLevel(target), topic.hasPrefix(own + "/") {
            return nil
        }
        if Self.isWithin(topic, layout.base) || ownedPrefixes.contains(where: { Self.isWithin(topic, $0) }) {
            return "\(rule); the gateway's own topics are not reply inboxes"
        }
        return nil
    }

    /// `<base>/bridge/response` or `<base>/<id>/response`; `nil` for an id that is not a valid device id, as such
    /// an id gets no topics of its own.
    private func ownResponseLevel(_ target: ContractRequest.Target) -> String? {
        switch target {
        case .bridge: return "\(layout.base)/bridge/response"
        case .device(let id, _):
            return DeviceIdentifier.isValid(id) ? "\(layout.base)/\(id)/response" : nil
        }
    }

    private static func isWithin(_ topic: String, _ prefix: String) -> Bool {
        topic == prefix || topic.hasPrefix(prefix + "/")
    }

    /// Control characters (C0, DEL, C1) and format characters (bidirectional overrides, zero-width joiners, BOM):
    /// they make a topic read differently from what it is.
    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }
}
