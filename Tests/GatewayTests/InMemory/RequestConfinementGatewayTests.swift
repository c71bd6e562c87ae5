import BlueZ
import Gateway
import MQTT
import Testing
import Wear2MQTTTesting
import Wearables

/// Issue 24 through a whole gateway in memory: a request cannot make the gateway publish on its own topics, a
/// hostile request topic is not echoed, a rename to the same name keeps the device connected, and one address is
/// managed by one entry only.
@Suite("Gateway in memory: confined answers and one entry per address")
struct RequestConfinementGatewayTests {
    static let strap = GatewayContractTests.strap
    static let finder = GatewayContractTests.finder

    func started(_ yaml: String = GatewayContractTests.devices, central: InMemoryCentral = InMemoryCentral()) async throws -> GatewayHarness {
        let gateway = try GatewayHarness(configuration: yaml, central: central)
        try gateway.addDevice("heart_rate_strap", address: Self.strap, options: ["rate_hz": .int(5)])
        try gateway.addDevice("key_finder", address: Self.finder)
        await gateway.start()
        return gateway
    }

    /// Publishes as an MQTT 5 client would and returns what the gateway published in answer.
    func send(_ gateway: GatewayHarness, _ topic: String, _ payload: String, responseTopic: String? = nil) async -> [OutgoingMessage] {
        let before = gateway.sink.messages.count
        await gateway.core.handle(IncomingMessage(
            topic: topic, payload: Array(payload.utf8), qos: .atLeastOnce, retain: false,
            properties: MQTTProperties(responseTopic: responseTopic, correlationData: [9])))
        return Array(gateway.sink.messages.dropFirst(before))
    }

    @Test("find with its Response Topic set to bridge/state, the finder's availability, its own request topic or Home Assistant's status is answered INVALID_VALUE on finder/response/find, and the finder does not ring")
    func refusedResponseTopic() async throws {
        try await withStopping(started()) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("finder")?["connection"]?.text == "connected" })
            let address = try #require(BluetoothAddress(Self.finder))
            let writesBefore = gateway.central.writes(to: address).count
            for responseTopic in ["test/bridge/state", "test/finder/availability", "test/finder/request/find", "test/finder",
                                  "homeassistant/status", "homeassistant/sensor/x/config", "$SYS/x", "test/strap/response/find"] {
                let published = await send(gateway, "test/finder/request/find", #"{"level":"high","transaction":"x"}"#, responseTopic: responseTopic)
                // Nothing answered there (the finder's own state may go out on test/finder meanwhile, as it does anyway).
                #expect(!published.contains { $0.topic == responseTopic && $0.properties.correlationData == [9] }, "\(responseTopic)")
                let answer = try #require(published.last { $0.topic == "test/finder/response/find" }, "\(responseTopic)")
                let object = try #require(GatewayHarness.object(answer.payload))
                #expect(object["error"]?["code"]?.text == "INVALID_VALUE", "\(responseTopic)")
                #expect(object["transaction"]?.text == "x")
                #expect(answer.properties.correlationData == [9])
            }
            #expect(gateway.central.writes(to: address).count == writesBefore, "no request was executed")
        }
    }

    @Test("find with a Response Topic outside the base rings the finder and answers there")
    func acceptedResponseTopic() async throws {
        try await withStopping(started()) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("finder")?["connection"]?.text == "connected" })
            let published = await send(gateway, "test/finder/request/find", #"{"level":"high"}"#, responseTopic: "client/7/inbox")
            let answer = try #require(published.last { $0.topic == "client/7/inbox" })
            #expect(GatewayHarness.object(answer.payload)?["status"]?.text == "ok")
            let address = try #require(BluetoothAddress(Self.finder))
            #expect(gateway.central.writes(to: address).filter { $0.characteristic.hasPrefix("00002a06") }.map(\.bytes) == [[2]])
        }
    }

    @Test("requests to bridge/request/, bridge/request/../.. and a device level with a right-to-left override are answered on …/response/invalid_request, nothing echoed into a topic")
    func hostileRequestTopics() async throws {
        try await withStopping(started()) { gateway in
            for (topic, answeredOn, code) in [
                ("test/bridge/request/", "test/bridge/response/invalid_request", "UNKNOWN_COMMAND"),
                ("test/bridge/request/../..", "test/bridge/response/invalid_request", "UNKNOWN_COMMAND"),
                ("test/\u{202E}rehcif/request/find", "test/bridge/response/invalid_request", "DEVICE_NOT_FOUND"),
                ("test/finder/request/\u{202E}dnif", "test/finder/response/invalid_request", "UNKNOWN_COMMAND"),
            ] {
                let answers = await send(gateway, topic, "{}").filter { $0.topic.contains("/response/") }
                #expect(answers.map(\.topic) == [answeredOn], "\(topic)")
                #expect(answers.first.flatMap { GatewayHarness.object($0.payload) }?["error"]?["code"]?.text == code, "\(topic)")
            }
        }
    }

    @Test("device/add and device/rename refuse a 10,000-character name, Bridge and request, each with INVALID_VALUE")
    func idLimits() async throws {
        try await withStopping(started()) { gateway in
            let long = String(repeating: "n", count: 10_000)
            for payload in [#"{"id":"finder","name":"\#(long)"}"#, #"{"id":"finder","name":"Bridge"}"#, #"{"id":"finder","name":"request"}"#] {
                #expect(GatewayContractTests.code(await gateway.request("bridge/request/device/rename", payload)) == "INVALID_VALUE")
            }
            let add = #"{"address":"C0:FF:EE:00:00:03","driver":"standard","name":"BRIDGE"}"#
            #expect(GatewayContractTests.code(await gateway.request("bridge/request/device/add", add)) == "INVALID_VALUE")
            #expect(gateway.sink.messages.allSatisfy { $0.topic.utf8.count < 200 })
        }
    }

    @Test("renaming a device to its own name answers ok and keeps it connected: no offline, no retired topics")
    func renameToItsOwnName() async throws {
        try await withStopping(started()) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("finder/availability")?["state"]?.text == "online" })
            let before = gateway.sink.messages.count
            let answer = await gateway.request("bridge/request/device/rename", #"{"id":"finder","name":"finder"}"#)
            #expect(answer?["status"]?.text == "ok", "\(String(describing: answer))")
            #expect(answer?["data"]?["id"]?.text == "finder")
            let since = gateway.sink.messages.dropFirst(before)
            #expect(!since.contains { $0.topic == "test/finder/availability" }, "no offline, not even briefly")
            #expect(!gateway.sink.wasCleared("test/finder"))
            #expect(await gateway.core.manager?.connectionState(id: "finder") == .connected)
        }
    }

    @Test("two renames of one device at once, while its link takes 300 ms to close, leave one entry for its address: one ok, one DEVICE_NOT_FOUND")
    func concurrentRenames() async throws {
        // The devices' clock: the link closes when the test moves it 300 ms on.
        let clock = ManualClock()
        try await withStopping(started(central: InMemoryCentral(time: clock.timeSource))) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("finder/availability")?["state"]?.text == "online" })
            gateway.central.setDisconnectLatency(try #require(BluetoothAddress(Self.finder)), .milliseconds(300))
            let core = gateway.core
            let renames = Task {
                await withTaskGroup(of: Void.self) { group in
                    for name in ["left", "right"] {
                        group.addTask {
                            await core.handle(IncomingMessage(
                                topic: "test/bridge/request/device/rename", payload: Array(#"{"id":"finder","name":"\#(name)"}"#.utf8),
                                qos: .atLeastOnce, retain: false, properties: MQTTProperties()))
                        }
                    }
                }
            }
            func renameAnswers() -> [[String: DeviceValue]] {
                gateway.sink.messages(on: "test/bridge/response/device/rename").compactMap { GatewayHarness.object($0.payload) }
            }
            // The second rename is answered while the first waits for the old session's disconnection.
            #expect(await gateway.until { renameAnswers().count == 1 })
            #expect(renameAnswers().first?["error"]?["code"]?.text == "DEVICE_NOT_FOUND", "\(renameAnswers())")
            // The first waits for the link to close, 300 ms on the devices' clock.
            #expect(await clock.step(by: .milliseconds(100)) { renameAnswers().count == 2 })
            await renames.value
            // The renamed device's link closes at once again when the gateway stops.
            gateway.central.setDisconnectLatency(try #require(BluetoothAddress(Self.finder)), nil)
            let answers = renameAnswers()
            #expect(answers.count == 2)
            #expect(answers.filter { $0["status"]?.text == "ok" }.count == 1, "\(answers)")
            #expect(answers.compactMap { $0["error"]?["code"]?.text } == ["DEVICE_NOT_FOUND"], "\(answers)")
            let entries = await gateway.core.manager?.managedDevices.filter { $0.address == Self.finder } ?? []
            #expect(entries.count == 1, "\(entries.map(\.id))")
        }
    }

    @Test("device/add of an address config.yaml lists without a driver, still waiting to be seen, is INVALID_VALUE")
    func addOfAConfiguredAddress() async throws {
        let yaml = """
        devices:
          - address: "C0:FF:EE:00:00:09"
            name: waiting
        """
        let gateway = try GatewayHarness(configuration: yaml)
        await gateway.start()
        await withStopping(gateway) { gateway in
            let answer = await gateway.request("bridge/request/device/add", #"{"address":"C0:FF:EE:00:00:09","driver":"standard","name":"twin"}"#)
            #expect(GatewayContractTests.code(answer) == "INVALID_VALUE", "\(String(describing: answer))")
            #expect(answer?["error"]?["message"]?.text?.contains("config.yaml lists it") == true)
            #expect(await gateway.core.manager?.managedDevices.contains { $0.id == "twin" } == false)
        }
    }
}
