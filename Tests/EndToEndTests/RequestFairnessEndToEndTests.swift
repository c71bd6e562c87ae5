import Foundation
import MQTT
import Testing
import Wear2MQTTTesting

/// Issue 38 against the real gateway and broker: long requests do not hold the slots quick ones need, scans run one
/// at a time, and a storm of large requests is answered without growing the gateway.
@Suite
struct RequestFairnessEndToEndTests {
    /// A request on `<base>/bridge/request/<name>` with `transaction`.
    static func bridgeRequest(_ stack: Stack, _ name: String, _ fields: String = "", transaction: String) -> OutgoingMessage {
        OutgoingMessage(topic: "\(stack.base)/bridge/request/\(name)",
                        text: "{\"transaction\":\"\(transaction)\"\(fields.isEmpty ? "" : "," + fields)}")
    }

    /// Reads answers until one carries `transaction`; every answer read on the way is kept in `seen`.
    static func answer(_ transaction: String, from iterator: inout IncomingMessages.AsyncIterator,
                       seen: inout [String: String]) async -> String? {
        if let found = seen[transaction] { return found }
        while let message = await iterator.next() {
            guard let object = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any],
                  let id = object["transaction"] as? String else { continue }
            seen[id] = message.text
            if id == transaction { return message.text }
        }
        return nil
    }

    @Test func sixtyFourScansAtOnceLeaveHealthChecksAnsweredAndOnlyOneScanRuns() async throws {
        try await RequestMemoryEndToEndTests.withQuietGateway(answerFilters: ["bridge/response/#"]) { stack, requester in
            for index in 0..<64 {
                requester.client.publish(Self.bridgeRequest(stack, "scan", #""duration_s":45"#, transaction: "scan-\(index)"))
            }
            let guardTask = requester.closeAfter(.seconds(40))
            defer { guardTask.cancel() }
            var iterator = requester.answers.makeAsyncIterator()
            var seen: [String: String] = [:]
            var latencies: [Duration] = []
            for index in 0..<20 {
                let sent = ContinuousClock.now
                requester.client.publish(Self.bridgeRequest(stack, "health_check", transaction: "health-\(index)"))
                let answer = await Self.answer("health-\(index)", from: &iterator, seen: &seen)
                #expect(answer?.contains("\"status\":\"ok\"") == true, "\(String(describing: answer))")
                latencies.append(.now - sent)
            }
            for index in 1..<64 { _ = await Self.answer("scan-\(index)", from: &iterator, seen: &seen) }
            let busy = (0..<64).filter { seen["scan-\($0)"]?.contains("\"BUSY\"") == true }
            #expect(busy.count == 63, "one scan runs, the others are BUSY: \(busy.count)")
            #expect(seen.keys.filter { $0.hasPrefix("scan-") }.count == 63, "the running scan still runs")
            let slowest = latencies.max() ?? .zero
            print("figure: 20 health_check answered while 64 scans were asked, slowest \(slowest), median \(latencies.sorted()[10])")
            // The target is 100 ms on a quiet machine (printed above); the bound here only tells a slot held for the
            // scan's 45 s from one that is not, whatever else the machine runs.
            #expect(slowest < .seconds(10))
            await requester.stop()
        }
    }

    @Test func aStormOfOneMebibyteRequestsIsAnsweredAndTheGatewayDoesNotGrow() async throws {
        try await RequestMemoryEndToEndTests.withQuietGateway(answerFilters: ["bridge/response/#"]) { stack, requester in
            let large = String(repeating: "x", count: 1 << 20)
            // Warm-up: the buffers the storm's answers need exist before the first measurement.
            _ = try await requester.send(50) { index in
                OutgoingMessage(topic: "\(stack.base)/bridge/request/health_check", text: "{\"transaction\":\"w\(index)\",\"pad\":\"\(large)\"}")
            }
            let before = try #require(RequestMemoryEndToEndTests.residentBytes(stack.gateway.child.pid))
            _ = try await requester.send(1_500) { index in
                OutgoingMessage(topic: "\(stack.base)/bridge/request/health_check", text: "{\"transaction\":\"s\(index)\",\"pad\":\"\(large)\"}")
            }
            let after = try #require(RequestMemoryEndToEndTests.residentBytes(stack.gateway.child.pid))
            print("figure: 1,500 requests of 1 MiB answered; gateway resident \(before / 1024) KiB before, \(after / 1024) KiB after")
            #expect(after - before < RequestMemoryEndToEndTests.allowedGrowth, "\(before) → \(after)")
            await requester.stop()
        }
    }
}
