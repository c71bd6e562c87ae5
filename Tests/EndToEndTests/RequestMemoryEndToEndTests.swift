import Foundation
import MQTT
import Testing
import Wear2MQTTTesting

/// Requests leave nothing behind in the gateway (issue 24: each one used to keep about 2.5 KB for good).
///
/// The real gateway, broker and simulator. A client floods `bridge/request/scan/stop` with valid and malformed
/// requests, plain and with an MQTT 5 Response Topic and Correlation Data, and counts the answers; the gateway's
/// resident memory after a warm-up of 10,000 requests and after 100,000 more must be within 5 MB.
///
/// At most `window` requests are unanswered at a time: a gateway flooded faster than it answers drops what
/// does not fit its incoming buffer (4,096 messages) unanswered, which would leave the count short.
///
/// Under a sanitizer (`Sanitizer.current`) the gateway's resident memory also holds the sanitizer's own: the bound
/// is scaled, never dropped (docs/reliability.md, Sanitizers). ThreadSanitizer's shadow and caches grew it by -5 to
/// +23 MB over this test: 50 MB there. AddressSanitizer keeps freed blocks in a quarantine of up to 256 MB (its
/// default `quarantine_size_mb`) to catch a use after free: 5 MB plus that there. The fixed leak added about 420 MB.
@Suite
struct RequestMemoryEndToEndTests {
    static let strap = "C0:FF:EE:00:00:24"
    static let allowedGrowth: Int = switch Sanitizer.current {
    case nil: 5 * 1024 * 1024
    case .thread: 50 * 1024 * 1024
    case .address: (5 + 256) * 1024 * 1024
    }
    static let window = 1_000

    /// A gateway with one strap it does not manage, its adapter answering, quietened, and a requester ready.
    /// `answerFilters`: more topics the requester reads answers on, subscribed before it is handed over.
    static func withQuietGateway(keepaliveSeconds: Int = 5, answerFilters: [String] = [],
                                 _ body: (Stack, Requester) async throws -> Void) async throws {
        try await Stack.with(scenarioDevices: """
          - kind: heart_rate_strap
            address: \(Self.strap)
            advertising_interval: 1s
        """, configuredDevices: nil, keepaliveSeconds: keepaliveSeconds) { stack in
            try await Self.waitUntilTheAdapterAnswers(stack)
            try await Self.quieten(stack)
            try await body(stack, try await Requester.start(stack, answerFilters: answerFilters.map { "\(stack.base)/" + $0 }))
        }
    }

    @Test func aHundredThousandRequestsLeaveTheGatewaysMemoryWhereItWas() async throws {
        try await Self.withQuietGateway { stack, requester in
            try await requester.send(10_000)
            let warm = try #require(Self.residentBytes(stack.gateway.child.pid))
            try await requester.send(100_000)
            let after = try #require(Self.residentBytes(stack.gateway.child.pid))
            await requester.stop()
            let growth = after - warm
            print("gateway VmRSS after 10,000 requests: \(warm / 1024) KiB, after 100,000 more: \(after / 1024) KiB"
                  + (Sanitizer.current.map { " (under \($0.rawValue))" } ?? ""))
            #expect(growth < Self.allowedGrowth,
                    "resident memory grew by \(growth / 1024) KiB over 100,000 requests (\(warm / 1024) → \(after / 1024) KiB)")
        }
    }

    /// Until the simulated adapter is attached, `scan/stop` is refused with ADAPTER_UNAVAILABLE; the flood should
    /// take the successful path. The gateway says BlueZ and its adapters changed with a new `bridge/info`: after a
    /// refusal (or none, the gateway not yet subscribed), the next try waits for one.
    static func waitUntilTheAdapterAnswers(_ stack: Stack) async throws {
        let deadline = ContinuousClock.now + .seconds(45)
        var attempt = 0
        var ok = false
        // Sent before the gateway subscribed, a request would be lost: it subscribes before its first `bridge/info`.
        _ = await stack.until(timeout: .seconds(45)) { stack.payloads("bridge/info").contains { $0.contains(#""bluez_available":true"#) } }
        while !ok, ContinuousClock.now < deadline {
            attempt += 1
            let infos = stack.payloads("bridge/info").count
            try await stack.request("bridge/request/scan/stop", "{\"transaction\":\"ready-\(attempt)\"}")
            let answer = await stack.response("bridge/response/scan/stop", transaction: "ready-\(attempt)",
                                              timeout: min(.seconds(10), deadline - .now))
            ok = answer?["status"] as? String == "ok"
            if !ok { _ = await stack.until(timeout: deadline - .now) { stack.payloads("bridge/info").count > infos } }
        }
        try #require(ok, "scan/stop never answered ok; gateway log: \(stack.gateway.child.errorOutput.suffix(2000))")
    }

    /// The flood shares two cores with other suites: the stack's witness, which would print every answer, stops,
    /// and the gateway's debug log (a line for each `scan/stop` with no scan running) goes down to info.
    static func quieten(_ stack: Stack) async throws {
        try await stack.request("bridge/request/options", #"{"options":{"log_level":"info"},"transaction":"quiet"}"#)
        let answer = await stack.response("bridge/response/options", transaction: "quiet", timeout: .seconds(20))
        try #require(answer?["status"] as? String == "ok", "options refused: \(String(describing: answer))")
        await stack.witness.stop()
    }

    /// Valid requests and malformed ones of several kinds, in turn; every one is answered.
    static func requestPayload(_ index: Int) -> String {
        switch index % 5 {
        case 0: "{\"transaction\":\(index)}"
        case 1: "{}"
        case 2: "{\"transaction\":\(index),"
        case 3: "not json \(index)"
        default: "[\(index)]"
        }
    }

    /// `VmRSS` of `/proc/<pid>/status`, in bytes.
    static func residentBytes(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return nil }
        return kilobytes * 1024
    }

    /// An MQTT 5 client that sends requests and counts their answers, on the contract's response topic (plain
    /// requests) and on its own Response Topic (the others). A Response Topic the gateway refused would send
    /// the answer to the contract's topic: either way one answer per request is counted.
    final class Requester: Sendable {
        let client: MQTTClient
        let runner: Task<Void, Error>
        let requestTopic: String
        let replyTopic: String
        let readyTopic: String
        let answers: IncomingMessages

        private init(client: MQTTClient, runner: Task<Void, Error>, base: String, replies: String) {
            self.client = client
            self.runner = runner
            requestTopic = "\(base)/bridge/request/scan/stop"
            replyTopic = "\(replies)/scan/stop"
            readyTopic = "\(replies)/ready"
            answers = client.messages
        }

        /// `answerFilters` are more topics answers come on (such as `<base>/bridge/response/#`).
        static func start(_ stack: Stack, answerFilters: [String] = []) async throws -> Requester {
            let replies = "replies/\(UUID().uuidString.prefix(8))"
            let client = try MQTTClient(configuration: MQTTClientConfiguration(
                host: "127.0.0.1", port: stack.broker.port, clientID: "requester-\(UUID().uuidString.prefix(8))",
                spoolDirectory: stack.broker.directory.file("requester-spool")))
            try client.subscribe("\(stack.base)/bridge/response/scan/stop", qos: .atMostOnce)
            try client.subscribe("\(replies)/#", qos: .atMostOnce)
            for filter in answerFilters { try client.subscribe(filter, qos: .atMostOnce) }
            let runner = Task { try await client.run() }
            let requester = Requester(client: client, runner: runner, base: stack.base, replies: replies)
            // A retained message on the reply topics comes back once the subscriptions are in place.
            try await MosquittoClients.publish(port: stack.broker.port, topic: requester.readyTopic, message: "ready",
                                               extraArguments: ["-r"])
            var iterator = requester.answers.makeAsyncIterator()
            let guardTask = requester.closeAfter(.seconds(30))
            let first = await iterator.next()
            guardTask.cancel()
            try #require(first?.topic == requester.readyTopic, "the requester's subscriptions never took effect")
            return requester
        }

        /// Sends `count` requests, every other one with a Response Topic and Correlation Data, and returns once
        /// each has been answered.
        func send(_ count: Int) async throws {
            let withCorrelation = try await send(count) { [requestTopic, replyTopic] index in
                var properties = MQTTProperties()
                if index % 2 == 1 {
                    properties.responseTopic = replyTopic
                    properties.correlationData = Array("request-\(index)".utf8)
                }
                return OutgoingMessage(topic: requestTopic, text: RequestMemoryEndToEndTests.requestPayload(index),
                                       properties: properties)
            }
            #expect(withCorrelation == count / 2, "\(withCorrelation) answers carried their request's correlation data")
        }

        /// Sends the `count` requests `request(i)` makes, at most `window` unanswered at a time and, with
        /// `perSecond`, no faster than that, and returns once each has been answered, with how many answers carried
        /// correlation data starting "request-".
        func send(_ count: Int, perSecond: Double? = nil, _ request: (Int) -> OutgoingMessage) async throws -> Int {
            var sent = 0
            var answered = 0
            var withCorrelation = 0
            // A failure guard only: the wait ends with the last answer. Closing ends the stream below.
            let guardTask = closeAfter(.seconds(max(120, perSecond.map { Int(Double(count) / $0) * 3 } ?? 0)))
            defer { guardTask.cancel() }
            var iterator = answers.makeAsyncIterator()
            let started = ContinuousClock.now
            while answered < count {
                let elapsed = ContinuousClock.now - started
                let allowed = perSecond.map { Int((Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18) * $0) + 1 } ?? count
                while sent < count, sent < allowed, sent - answered < RequestMemoryEndToEndTests.window {
                    client.publish(request(sent))
                    sent += 1
                }
                if sent == answered {
                    // Everything sent is answered and the pace holds the next one back: the pace's tick. A rate is time
                    // itself, so no message can mark when the next request is due.
                    try await Task.sleep(for: .milliseconds(5))
                    continue
                }
                guard let answer = await iterator.next() else { break }
                if answer.topic == readyTopic { continue }
                answered += 1
                if answer.properties.correlationData?.starts(with: Array("request-".utf8)) == true { withCorrelation += 1 }
            }
            try #require(answered == count, "\(answered) of \(count) requests answered")
            return withCorrelation
        }

        /// A hang guard: closes the client (ending `answers`) if the test is still waiting after `timeout`.
        func closeAfter(_ timeout: Duration) -> HangGuard {
            HangGuard(after: timeout) { [client] in await client.close(timeout: .milliseconds(100)) }
        }

        func stop() async {
            await client.close(timeout: .seconds(1))
            _ = try? await runner.value
        }
    }
}
