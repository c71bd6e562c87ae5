import Gateway
import Logging
import MQTT
import Testing
import Wear2MQTTTesting
import Wearables

/// `bridge/logging`: warnings and errors as JSON, through a token bucket that tells how much it held back.
@Suite("bridge/logging")
struct BridgeLoggingTests {
    func record(_ level: Logger.Level, _ message: String, at milliseconds: Int64, label: String = "devices") -> LogRecord {
        LogRecord(timestampMilliseconds: milliseconds, level: level, label: label, message: message,
                  metadata: ["device": "strap"], error: "timed out")
    }

    @Test("the bucket lets a burst through, then its rate, and counts what it refused")
    func limiter() {
        var limiter = LogRateLimiter(capacity: 3, perSecond: 1)
        #expect((0..<5).map { _ in limiter.admit(atSeconds: 0) } == [0, 0, 0, nil, nil])
        #expect(limiter.admit(atSeconds: 0.5) == nil, "half a token")
        #expect(limiter.admit(atSeconds: 1.0) == 3, "one token a second; three were refused meanwhile")
        #expect(limiter.admit(atSeconds: 100) == 0)
        #expect((0..<4).map { _ in limiter.admit(atSeconds: 100) } == [0, 0, nil, nil], "refilled to the capacity, not beyond")
    }

    @Test("warnings and errors are published as JSON on bridge/logging; info, and the mqtt logger's own records, are not")
    func publishes() throws {
        let sink = RecordingSink()
        let logging = BridgeLogging(topics: TopicLayout(base: "test"), sink: sink)
        logging.publish(record(.info, "connected", at: 1_000))
        logging.publish(record(.warning, "lost the MQTT broker", at: 1_000, label: "mqtt"))
        logging.publish(record(.error, "write failed", at: 1_000))
        let messages = sink.messages(on: "test/bridge/logging")
        #expect(messages.count == 1)
        let message = try #require(messages.first)
        #expect(!message.retain && message.qos == .atMostOnce)
        let payload = try JSONParser.parse(message.payload)
        #expect(payload["level"]?.text == "error")
        #expect(payload["message"]?.text == "write failed")
        #expect(payload["logger"]?.text == "devices")
        #expect(payload["ts"]?.integer == 1_000)
        #expect(payload["metadata"]?["device"]?.text == "strap")
        #expect(payload["metadata"]?["error"]?.text == "timed out")
        #expect(payload["suppressed"] == nil)
    }

    @Test("a flood of warnings costs the broker a burst, then tells how many were held back")
    func flood() throws {
        let sink = RecordingSink()
        let logging = BridgeLogging(topics: TopicLayout(base: "test"), sink: sink)
        for index in 0..<1_000 { logging.publish(record(.warning, "flood \(index)", at: 5_000)) }
        #expect(sink.messages(on: "test/bridge/logging").count == 20)
        logging.publish(record(.warning, "later", at: 6_000))
        let last = try JSONParser.parse(try #require(sink.messages(on: "test/bridge/logging").last).payload)
        #expect(last["message"]?.text == "later")
        #expect(last["suppressed"]?.integer == 980)
    }

    @Test("a handler follows its control's level unless it was given its own")
    func control() {
        let control = LogControl(level: .info)
        var handler = StderrLogHandler(label: "test", format: .logfmt, control: control)
        #expect(handler.logLevel == .info)
        control.level = .error
        #expect(handler.logLevel == .error, "follows the shared level")
        handler.logLevel = .trace
        control.level = .warning
        #expect(handler.logLevel == .trace, "a level set on the logger stays")
    }
}
