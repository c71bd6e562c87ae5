import Gateway
import MQTT
import Testing
import Wear2MQTTTesting
import Wearables

/// Issue 38: requests that must change nothing — retained ones (they would run again at every start), empty topic
/// levels, hostile ids echoed back — and device ids that differ only in case.
@Suite("Gateway in memory: retained requests, empty levels, quoted ids, ids in any case")
struct RequestHygieneGatewayTests {
    func started() async throws -> GatewayHarness { try await GatewayContractTests().started() }

    /// What the broker hands over for a request published retained: the retain flag set (from its store at
    /// subscribe time, or live under Retain As Published).
    static func retained(_ topic: String, _ payload: String) -> IncomingMessage {
        IncomingMessage(topic: "test/\(topic)", payload: Array(payload.utf8), qos: .atLeastOnce, retain: true,
                        properties: MQTTProperties())
    }

    @Test("a retained device/remove is refused with FORBIDDEN, not executed, and cleared from the broker; its echo is no request")
    func retainedRemoveIsRefusedAndCleared() async throws {
        try await withStopping(started()) { gateway in
            let before = gateway.sink.messages.count
            await gateway.core.handle(Self.retained("bridge/request/device/remove", #"{"id":"finder","transaction":"r1"}"#))
            let published = gateway.sink.messages.dropFirst(before)
            let answer = published.first { $0.topic == "test/bridge/response/device/remove" }.flatMap { GatewayHarness.object($0.payload) }
            #expect(GatewayContractTests.code(answer) == "FORBIDDEN")
            #expect(answer?["transaction"]?.text == "r1")
            #expect(answer?["error"]?["message"]?.text?.contains("retain") == true)
            let clearing = published.first { $0.topic == "test/bridge/request/device/remove" }
            #expect(clearing?.payload.isEmpty == true && clearing?.retain == true, "an empty retained message clears it")
            let manager = try #require(gateway.core.manager)
            #expect(await manager.device("finder") != nil, "not removed")
            // The clearing comes back: retained and empty under MQTT 5, plain and empty under 3.1.1. Neither is answered.
            let afterClear = gateway.sink.messages.count
            await gateway.core.handle(Self.retained("bridge/request/device/remove", ""))
            await gateway.core.handle(IncomingMessage(topic: "test/bridge/request/device/remove", payload: [], qos: .atLeastOnce,
                                                      retain: false, properties: MQTTProperties()))
            #expect(gateway.sink.messages.count == afterClear)
            // A plain request still works afterwards.
            #expect(await gateway.request("bridge/request/device/remove", #"{"id":"finder"}"#)?["status"]?.text == "ok")
        }
    }

    @Test("retained refresh, options and factory_reset are refused the same way; plain ones are answered", arguments: [
        "strap/request/refresh", "bridge/request/options", "finder/request/factory_reset", "strap/get",
    ])
    func everyRetainedRequestIsRefused(_ topic: String) async throws {
        try await withStopping(started()) { gateway in
            let before = gateway.sink.messages.count
            await gateway.core.handle(Self.retained(topic, #"{"log_level":"debug"}"#))
            let codes = gateway.sink.messages.dropFirst(before).filter { $0.topic.contains("/response/") }
                .compactMap { GatewayHarness.object($0.payload) }.map { GatewayContractTests.code($0) }
            #expect(codes == ["FORBIDDEN"])
            #expect(gateway.core.runtime.logLevel != .debug, "the retained options changed nothing")
        }
    }

    @Test("empty id levels are answered invalid_request on the bridge's fixed topic", arguments: [
        "test//request/refresh", "test//set", "test//get", "test//request/find",
    ])
    func emptyLevelsAreAnswered(_ topic: String) async throws {
        try await withStopping(started()) { gateway in
            let before = gateway.sink.messages.count
            await gateway.receive(topic, "{}")
            let answer = gateway.sink.messages.dropFirst(before).first { $0.topic == "test/bridge/response/invalid_request" }
            #expect(answer != nil, "\(gateway.sink.messages.dropFirst(before).map(\.topic))")
            #expect(GatewayContractTests.code(answer.flatMap { GatewayHarness.object($0.payload) }) == "DEVICE_NOT_FOUND")
        }
    }

    @Test("DEVICE_NOT_FOUND quotes a hostile id cut at 40 characters, with bidirectional and control characters escaped")
    func hostileIdsAreQuotedShort() async throws {
        try await withStopping(started()) { gateway in
            // The id as JSON escapes (a raw control character is not JSON): a right-to-left override and a bell.
            let hostile = #"\u202Eevil\u0007"# + String(repeating: "x", count: 10_000)
            let answer = await gateway.request("bridge/request/device/remove", "{\"id\":\"\(hostile)\"}")
            #expect(GatewayContractTests.code(answer) == "DEVICE_NOT_FOUND")
            let message = try #require(answer?["error"]?["message"]?.text)
            #expect(message.count < 100, "\(message.count) characters")
            #expect(!message.unicodeScalars.contains { $0.value == 0x202E || $0.value == 0x07 })
            #expect(message.contains(#"\u202Eevil\u0007xx"#) && message.hasSuffix("..."), "\(message)")
        }
    }

    @Test("ids are compared in any case: N1 beside n1 is refused, and a request to N1 reaches n1")
    func idsInAnyCase() async throws {
        try await withStopping(started()) { gateway in
            let added = await gateway.request("bridge/request/device/add", #"{"address":"C0:FF:EE:00:00:42","driver":"standard","name":"n1"}"#)
            #expect(added?["status"]?.text == "ok", "\(String(describing: added))")
            let clash = await gateway.request("bridge/request/device/add", #"{"address":"C0:FF:EE:00:00:43","driver":"standard","name":"N1"}"#)
            #expect(GatewayContractTests.code(clash) == "INVALID_VALUE")
            let renamed = await gateway.request("bridge/request/device/rename", #"{"id":"finder","name":"STRAP"}"#)
            #expect(GatewayContractTests.code(renamed) == "INVALID_VALUE", "STRAP is strap in another case")
            let options = await gateway.request("bridge/request/device/options", #"{"id":"N1","options":{"batch_ms":500}}"#)
            #expect(options?["status"]?.text == "ok", "\(String(describing: options))")
            let manager = try #require(gateway.core.manager)
            #expect((try? await manager.options(id: "n1"))?.batchMilliseconds == 500)
            // A case change of the device's own id is a rename like any other.
            #expect(await gateway.request("bridge/request/device/rename", #"{"id":"n1","name":"N1"}"#)?["status"]?.text == "ok")
            #expect(await manager.managedDevices.map(\.id).filter { $0.lowercased() == "n1" } == ["N1"])
        }
    }
}

/// Issue 38: one scan at a time. A second used to end the first's discovery and answer `devices: []`.
@Suite("Gateway in memory: scans")
struct ScanGatewayTests {
    @Test("a second scan while one runs is BUSY; scan/stop ends the first early with what it found")
    func oneScanAtATime() async throws {
        // A scan's duration runs on the gateway's clock.
        let clock = ManualClock()
        let gateway = try GatewayHarness(time: clock.timeSource)
        try gateway.addDevice("heart_rate_strap", address: GatewayContractTests.strap)
        try gateway.addDevice("key_finder", address: GatewayContractTests.finder)
        await gateway.start()
        await withStopping(gateway) { gateway in
            let first = Task { await gateway.request("bridge/request/scan", #"{"duration_s":60}"#) }
            #expect(await gateway.until { gateway.sink.messages.contains { message in message.topic == "test/bridge/event" && String(decoding: message.payload, as: UTF8.self).contains("device_found") } })
            let second = await gateway.request("bridge/request/scan", #"{"duration_s":5}"#)
            #expect(GatewayContractTests.code(second) == "BUSY", "\(String(describing: second))")
            #expect(second?["error"]?["message"]?.text?.contains("a scan is running") == true)
            #expect(await gateway.request("bridge/request/scan/stop")?["status"]?.text == "ok")
            let answer = await first.value
            let found = answer?["data"]?["devices"]?.list?.compactMap { $0["address"]?.text } ?? []
            #expect(Set(found) == [GatewayContractTests.strap, GatewayContractTests.finder], "\(String(describing: answer))")
            // The scan is over: another may start, and it answers once its second has passed. Asleep on the gateway's
            // clock besides the scan's second: the harness's periodic work and the first device list, settling.
            let before = gateway.sink.messages(on: "test/bridge/response/scan").count
            Task { await gateway.request("bridge/request/scan", #"{"duration_s":1}"#) }
            #expect(await clock.sleepers(atLeast: 3))
            await clock.advance(by: .seconds(1))
            #expect(await gateway.until { gateway.sink.messages(on: "test/bridge/response/scan").count > before })
            let third = gateway.last("bridge/response/scan")
            #expect(third?["status"]?.text == "ok", "\(String(describing: third))")
        }
    }
}
