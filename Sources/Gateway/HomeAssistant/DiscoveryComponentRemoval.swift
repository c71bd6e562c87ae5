import MQTT
import Wearables

/// A component that disappears from a device's document (a Bose device reports other capabilities, a driver stops
/// offering a control) must be removed as Home Assistant's device discovery asks: named once more with its platform
/// only (`"gesture_head_nod":{"p":"switch"}`); after that it may be left out. Dropping it silently would leave
/// an orphaned entity behind.
extension HomeAssistantDiscovery {
    /// `message` (a device's new document) with a platform-only entry for each component `previous` had and it
    /// lacks; `message` itself when nothing disappeared.
    static func withRemovedComponents(_ message: OutgoingMessage, previous: [UInt8]) -> OutgoingMessage {
        let limits = JSONLimits(maximumBytes: 1 << 20)
        guard case .object(var body)? = try? JSONParser.parse(message.payload, limits: limits),
              case .object(var current)? = body["cmps"],
              let before = (try? JSONParser.parse(previous, limits: limits))?["cmps"]?.object else { return message }
        let gone = before.filter { current[$0.key] == nil }
        guard !gone.isEmpty else { return message }
        for (key, component) in gone {
            current[key] = .object(["p": component["p"] ?? .null])
        }
        body["cmps"] = .object(current)
        var writer = JSONWriter(capacity: message.payload.count + 64 * gone.count)
        writer.value(.object(body))
        var copy = message
        copy.payload = writer.bytes
        return copy
    }
}
