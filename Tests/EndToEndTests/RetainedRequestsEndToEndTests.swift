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

/// Issue 38 against a real mosquitto: the retained view of a device that is away is the same before and after a
/// restart of the gateway, and after a restart of the broker (which forgets everything retained: the gateway puts
/// the whole document back).
@Suite
struct StateKeptEndToEndTests {
    static let strap = "C0:FF:EE:00:03:02"

    @Test func anAwayStrapsRetainedViewSurvivesAGatewayRestartAndABrokerRestart() async throws {
        let scenario = "  - kind: heart_rate_strap\n    address: \(Self.strap)\n    advertising_interval: 100ms"
        try await Stack.with(scenarioDevices: scenario, configuredDevices: "  - address: \(Self.strap)\n    driver: standard\n    name: strap") { stack in
            try #require(await eventually(timeout: .seconds(60)) {
                let state = stack.last("strap")
                return state?["battery"] != nil && state?["firmware"] != nil && state?["connection"] as? String == "connected"
            }, "\(stack.payloads("strap"))")
            try await stack.control.setAdvertising(Self.strap, false)
            try await stack.control.dropLink(Self.strap)
            try #require(await eventually(timeout: .seconds(60)) { try await retainedMessages(stack)["strap"]?.contains("\"disconnected\"") == true })
            let before = try await retainedView(stack)
            #expect(before["strap/availability"]?.contains("offline") == true)

            try await stack.restartGateway()
            try #require(await eventually(timeout: .seconds(60)) { stack.payloads("bridge/info").filter { $0.contains("\"bluez_available\":true") }.count >= 2 })
            try await Task.sleep(for: .seconds(1))
            let afterRestart = try await retainedView(stack)
            #expect(afterRestart == before, "after the gateway's restart: \(afterRestart) vs \(before)")

            await stack.broker.stop()
            try await stack.broker.start()
            let restored = try await eventually(timeout: .seconds(60)) { try await retainedView(stack) == before }
            let after = try await retainedView(stack)
            #expect(restored, "after the broker's restart: \(after) vs \(before)")
        }
    }

    /// What a new subscriber gets for the strap's state and availability: the retained messages, by topic, with the
    /// one live fact left out of the state — `connection`, which moves between `disconnected` and `connecting` as
    /// the gateway keeps trying to reach the strap, before the restart as after it.
    func retainedView(_ stack: Stack) async throws -> [String: String] {
        var view = try await retainedMessages(stack)
        if let state = view["strap"] {
            view["strap"] = state.replacingOccurrences(of: #""connection":"connecting","#, with: "")
                .replacingOccurrences(of: #""connection":"disconnected","#, with: "")
        }
        return view
    }

    func retainedMessages(_ stack: Stack) async throws -> [String: String] {
        let lines = try await MosquittoClients.receive(port: stack.broker.port, topic: "\(stack.base)/strap/#", count: 10,
                                                       timeoutSeconds: 1)
        var view: [String: String] = [:]
        for line in lines {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            view[String(parts[0].dropFirst(stack.base.count + 1))] = parts[1]
        }
        return view
    }
}
