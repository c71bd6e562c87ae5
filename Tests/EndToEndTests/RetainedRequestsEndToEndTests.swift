import Foundation
import Testing
import Wear2MQTTTesting

/// Issue 38 against a real mosquitto: a request published retained is refused and cleared, never executed — live
/// (the gateway subscribes with Retain As Published) and from the broker's store when the gateway starts.
@Suite
struct RetainedRequestsEndToEndTests {
    static let finder = "C0:FF:EE:00:03:01"

    @Test func aRetainedRemoveIsRefusedLiveAndAtStartAndClearedFromTheBroker() async throws {
        let scenario = "  - kind: key_finder\n    address: \(Self.finder)\n    advertising_interval: 100ms"
        try await Stack.with(scenarioDevices: scenario, configuredDevices: nil) { stack in
            try #require(await eventually(timeout: .seconds(60)) { stack.payloads("bridge/info").contains { $0.contains("\"bluez_available\":true") } })
            try await stack.request("bridge/request/device/add", #"{"address":"\#(Self.finder)","driver":"standard","name":"victim","transaction":"add"}"#)
            #expect(await stack.response("bridge/response/device/add", transaction: "add")?["status"] as? String == "ok")

            // Live: published retained while the gateway runs.
            try await MosquittoClients.publish(port: stack.broker.port, topic: "\(stack.base)/bridge/request/device/remove",
                                               message: #"{"id":"victim","transaction":"live"}"#, extraArguments: ["-r"])
            let live = await stack.response("bridge/response/device/remove", transaction: "live")
            #expect(Stack.error(live).code == "FORBIDDEN", "\(String(describing: live))")
            #expect(try await storedRequest(stack) == nil, "cleared from the broker's store")

            // At start: published retained while the gateway is away, found in the broker's store when it subscribes.
            await stack.gateway.child.stop()
            try await MosquittoClients.publish(port: stack.broker.port, topic: "\(stack.base)/bridge/request/device/remove",
                                               message: #"{"id":"victim","transaction":"stored"}"#, extraArguments: ["-r"])
            #expect(try await storedRequest(stack) != nil)
            try await stack.restartGateway()
            try #require(await eventually(timeout: .seconds(60)) { stack.payloads("bridge/info").filter { $0.contains("\"bluez_available\":true") }.count >= 2 })
            let stored = await stack.response("bridge/response/device/remove", transaction: "stored")
            #expect(Stack.error(stored).code == "FORBIDDEN", "\(String(describing: stored))")
            #expect(try await eventually { try await storedRequest(stack) == nil }, "cleared from the broker's store")

            // Neither ran: the device is still managed, and a plain request removes it.
            try await stack.request("bridge/request/device/remove", #"{"id":"victim","transaction":"plain"}"#)
            #expect(await stack.response("bridge/response/device/remove", transaction: "plain")?["status"] as? String == "ok")
            // The clearing's echo was no request: exactly three answers on the topic.
            try await Task.sleep(for: .milliseconds(500))
            #expect(stack.payloads("bridge/response/device/remove").count == 3, "\(stack.payloads("bridge/response/device/remove"))")
        }
    }

    /// What the broker keeps on the request topic, as a new subscriber sees it.
    func storedRequest(_ stack: Stack) async throws -> String? {
        try await MosquittoClients.receive(port: stack.broker.port, topic: "\(stack.base)/bridge/request/device/remove",
                                           timeoutSeconds: 1).first
    }
}
