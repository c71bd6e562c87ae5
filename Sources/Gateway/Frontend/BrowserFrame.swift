import Wearables

/// What a browser sends on the web interface's WebSocket (docs/frontend.md): MQTT's operations on the contract's
/// topics, as one JSON object per text frame.
public enum BrowserFrame: Sendable, Equatable {
    case auth(token: String)
    case subscribe([TopicFilter])
    case unsubscribe([TopicFilter])
    /// A request: `payload` re-encoded, as an MQTT client would have published it.
    case publish(topic: String, payload: [UInt8])

    /// A request's 64 KiB and the frame around it.
    static let limits = JSONLimits(maximumBytes: 80 * 1024, maximumDepth: 66)

    /// Reads one text frame; the error is a sentence for the page.
    public static func parse(_ bytes: [UInt8]) -> Result<BrowserFrame, FrameError> {
        let value: DeviceValue
        do {
            value = try JSONParser.parse(bytes, limits: limits)
        } catch {
            return .failure(FrameError("the frame is not valid JSON: \(error)"))
        }
        guard case .object(let fields) = value else { return .failure(FrameError("a frame must be one JSON object")) }
        guard case .text(let type)? = fields["type"] else { return .failure(FrameError("a frame needs \"type\" as a string")) }
        switch type {
        case "auth":
            guard case .text(let token)? = fields["token"] else { return .failure(FrameError("auth needs \"token\" as a string")) }
            return .success(.auth(token: token))
        case "subscribe", "unsubscribe":
            guard case .list(let items)? = fields["topics"] else {
                return .failure(FrameError("\(type) needs \"topics\", a list of topic filters"))
            }
            var filters: [TopicFilter] = []
            for item in items {
                guard case .text(let text) = item, let filter = TopicFilter(text) else {
                    return .failure(FrameError("\(type): \(RequestReader.quote(item)) is not an MQTT topic filter"))
                }
                filters.append(filter)
            }
            return .success(type == "subscribe" ? .subscribe(filters) : .unsubscribe(filters))
        case "publish":
            guard case .text(let topic)? = fields["topic"] else { return .failure(FrameError("publish needs \"topic\" as a string")) }
            let payload = fields["payload"].map { JSONWriter.encode($0) } ?? []
            return .success(.publish(topic: topic, payload: payload))
        default:
            return .failure(FrameError("unknown frame type \(RequestReader.quote(type)); expected auth, subscribe, unsubscribe or publish"))
        }
    }

    public struct FrameError: Error, Sendable, Equatable {
        public var message: String
        init(_ message: String) { self.message = message }
    }
}
