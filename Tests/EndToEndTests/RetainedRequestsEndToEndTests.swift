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
            try #require(await stack.until(timeout: .seconds(60)) { stack.payloads("bridge/info").contains { $0.contains("\"bluez_available\":true") } })
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
            try #require(await stack.until(timeout: .seconds(60)) { stack.payloads("bridge/info").filter { $0.contains("\"bluez_available\":true") }.count >= 2 })
            let stored = await stack.response("bridge/response/device/remove", transaction: "stored")
            #expect(Stack.error(stored).code == "FORBIDDEN", "\(String(describing: stored))")
            // The witness sees the gateway's clearing (an empty retained message) once the broker has taken it.
            #expect(await stack.until { Stack.isCleared(stack.payloads("bridge/request/device/remove").last) }, "cleared")
            #expect(try await storedRequest(stack) == nil, "cleared from the broker's store")

            // Neither ran: the device is still managed, and a plain request removes it.
            try await stack.request("bridge/request/device/remove", #"{"id":"victim","transaction":"plain"}"#)
            #expect(await stack.response("bridge/response/device/remove", transaction: "plain")?["status"] as? String == "ok")
            // The clearing's echo was no request: exactly three answers on the topic. The gateway takes messages in
            // the broker's order and the echo reached it before `plain` did: an answer to it would have come before
            // this health check's.
            try await stack.request("bridge/request/health_check", #"{"transaction":"barrier"}"#)
            #expect(await stack.response("bridge/response/health_check", transaction: "barrier") != nil)
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
            try #require(await stack.until(timeout: .seconds(60)) {
                let state = stack.last("strap")
                return state?["battery"] != nil && state?["firmware"] != nil && state?["connection"] as? String == "connected"
            }, "\(stack.payloads("strap"))")
            try await stack.control.setAdvertising(Self.strap, false)
            try await stack.control.dropLink(Self.strap)
            try #require(await stack.until(timeout: .seconds(60)) { stack.payloads("strap").last?.contains("\"disconnected\"") == true })
            let before = try await retainedView(stack)
            #expect(before["strap/availability"]?.contains("offline") == true)

            let statesOfTheBridge = stack.payloads("bridge/state").count
            try await stack.restartGateway()
            try #require(await stack.untilOnline(since: statesOfTheBridge))
            // Strap states printed from here on are the new process's: the old one's reached the broker before its online.
            let statesBefore = stack.payloads("strap").count
            try #require(await stack.until(timeout: .seconds(60)) { stack.payloads("bridge/info").filter { $0.contains("\"bluez_available\":true") }.count >= 2 })
            // The new process's session has tried the away strap once (`connecting`, then `disconnected`): what the
            // restart publishes about it has been published.
            try #require(await stack.until(timeout: .seconds(60)) {
                let reported = stack.payloads("strap").dropFirst(statesBefore)
                guard let attempt = reported.firstIndex(where: { $0.contains(#""connection":"connecting""#) }) else { return false }
                return reported[attempt...].contains { $0.contains(#""connection":"disconnected""#) }
            }, "\(stack.payloads("strap").dropFirst(statesBefore))")
            let afterRestart = try await retainedView(stack)
            #expect(afterRestart == before, "after the gateway's restart: \(afterRestart) vs \(before)")

            let seenBefore = Dictionary(uniqueKeysWithValues: before.keys.map { ($0, stack.payloads($0).count) })
            await stack.broker.stop()
            try await stack.broker.start()
            // The gateway puts the documents back once it is connected again; the witness, reconnected too, sees them.
            let restored = await stack.until(timeout: .seconds(60)) { witnessedView(stack, after: seenBefore) == before }
            let after = try await retainedView(stack)
            #expect(restored && after == before, "after the broker's restart: \(after) vs \(before)")
        }
    }

    /// What a new subscriber gets for the strap's state and availability: the retained messages, by topic, with the
    /// one live fact left out of the state — `connection`, which moves between `disconnected` and `connecting` as
    /// the gateway keeps trying to reach the strap, before the restart as after it.
    func retainedView(_ stack: Stack) async throws -> [String: String] { withoutConnection(try await retainedMessages(stack)) }

    func withoutConnection(_ view: [String: String]) -> [String: String] {
        var view = view
        if let state = view["strap"] {
            view["strap"] = state.replacingOccurrences(of: #""connection":"connecting","#, with: "")
                .replacingOccurrences(of: #""connection":"disconnected","#, with: "")
        }
        return view
    }

    /// The same view from what the witness saw: the last payload on each topic after its first `counts[topic]`.
    func witnessedView(_ stack: Stack, after counts: [String: Int]) -> [String: String] {
        withoutConnection(counts.reduce(into: [:]) { view, seen in
            view[seen.key] = stack.payloads(seen.key).dropFirst(seen.value).last
        })
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
