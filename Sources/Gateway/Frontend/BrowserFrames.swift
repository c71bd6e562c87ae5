import MQTT
import Wearables

/// The frames the gateway sends a browser (docs/frontend.md), encoded without parsing what the gateway already
/// wrote as JSON: a message's payload goes into its entry byte for byte.
enum BrowserFrames {
    /// `{"topic":…,"payload":…,"retained":…}`: the payload as it was published (the gateway writes JSON objects and
    /// lists), `null` for an empty one (a retained topic cleared), anything else as a JSON string.
    static func entry(_ message: OutgoingMessage) -> BrowserQueue.Entry {
        var bytes = Array(#"{"topic":"#.utf8)
        bytes += JSONWriter.encode(.text(message.topic))
        bytes += Array(#","payload":"#.utf8)
        switch message.payload.first {
        case nil: bytes += Array("null".utf8)
        case UInt8(ascii: "{"), UInt8(ascii: "["): bytes += message.payload
        default: bytes += JSONWriter.encode(.text(String(decoding: message.payload, as: UTF8.self)))
        }
        bytes += Array((message.retain ? #","retained":true}"# : #","retained":false}"#).utf8)
        return BrowserQueue.Entry(topic: message.topic, encoded: bytes, retained: message.retain)
    }

    static func messages(_ entries: [BrowserQueue.Entry]) -> [UInt8] {
        var bytes = Array(#"{"type":"messages","messages":["#.utf8)
        bytes.reserveCapacity(entries.reduce(bytes.count + 2) { $0 + $1.encoded.count + 1 })
        for (index, entry) in entries.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += entry.encoded
        }
        bytes += Array("]}".utf8)
        return bytes
    }

    static func status(brokerConnected: Bool, dropped: Int) -> [UInt8] {
        JSONWriter.encode(.object(["type": .text("status"), "broker": .object(["connected": .flag(brokerConnected)]),
                                   "dropped": .integer(Int64(dropped))]))
    }

    static func hello(baseTopic: String, gatewayID: String, version: String, brokerConnected: Bool) -> [UInt8] {
        JSONWriter.encode(.object([
            "type": .text("hello"), "base_topic": .text(baseTopic), "gateway_id": .text(gatewayID), "version": .text(version),
            "broker": .object(["connected": .flag(brokerConnected)]),
        ]))
    }

    static func error(_ message: String) -> [UInt8] {
        JSONWriter.encode(.object(["type": .text("error"), "message": .text(message)]))
    }

    static let authRequired = Array(#"{"type":"auth_required"}"#.utf8)
    static let authFailed = Array(#"{"type":"auth_failed"}"#.utf8)

    /// Too many wrong tokens from this address: the token was not looked at; try again after `seconds`.
    static func authThrottled(retryAfterSeconds seconds: Int) -> [UInt8] {
        JSONWriter.encode(.object(["type": .text("auth_failed"), "retry_after_s": .integer(Int64(seconds))]))
    }
}
