import DBus
import Foundation
import MQTT
import Simulator
import Testing
import Wear2MQTTTesting

/// The whole product: a real mosquitto, a private D-Bus with the BlueZ simulator as a child process, and the
/// gateway as a child process configured with a heart-rate strap and a key finder: samples and a dropped link,
/// MQTT 5 request/response through the broker, device management with passkey pairing through the agent, and an
/// adapter's power cycle. The contract's errors and the independence of devices are tested in memory
/// (Tests/GatewayTests/InMemory/GatewayContractTests.swift).
@Suite(.timeLimit(.minutes(3)))
struct SimulatedWearablesTests {
    static let strap = "C0:FF:EE:00:00:01"
    static let tag = "C0:FF:EE:00:00:04"

    static let scenarioDevices = """
      - kind: heart_rate_strap
        address: \(strap)
        name: HRM-Sim
        advertising_interval: 100ms
        options: { rate_hz: 5, battery: 77, manufacturer: Polar Electro Oy, model: H10 }
        pairing: { method: request_passkey, passkey: 246810 }
      - kind: key_finder
        address: \(tag)
        advertising_interval: 100ms
    """

    static let configuredDevices = """
      - address: \(strap)
        name: strap
      - address: \(tag)
        name: tag
    """

    @Test func samplesStateAvailabilityAndFindFlowThroughTheGateway() async throws {
        let stack = try await Stack.start(scenarioDevices: Self.scenarioDevices, configuredDevices: Self.configuredDevices)
        // Heart rate and RR intervals on sensor/heart_rate.
        #expect(await stack.until(timeout: .seconds(45)) { stack.payloads("strap/sensor/heart_rate").count >= 5 })
        let samples = stack.payloads("strap/sensor/heart_rate").compactMap(stack.json)
        #expect(samples.allSatisfy { ($0["bpm"] as? Int).map { (40...200).contains($0) } ?? false })
        #expect(samples.contains { ($0["rr_ms"] as? [Double])?.isEmpty == false })
        let timestamps = samples.compactMap { $0["ts"] as? Int64 }
        #expect(timestamps == timestamps.sorted())

        // Battery and firmware in the retained state.
        let state = try #require(stack.payloads("strap").last.flatMap(stack.json))
        #expect(state["battery"] as? Int == 77)
        #expect(state["firmware"] as? String != nil)
        #expect(state["manufacturer"] as? String == "Polar Electro Oy")
        #expect(state["connection"] as? String == "connected")

        // The link drops: offline; the gateway reconnects by itself: online again.
        // Offline is looked for among what came after the drop, not as the last word: a quick reconnect can say
        // online again between two looks (seen on a loaded machine).
        let availabilityBefore = stack.payloads("strap/availability").count
        try await stack.control.dropLink(Self.strap)
        #expect(await stack.until(timeout: .seconds(30)) {
            stack.payloads("strap/availability").dropFirst(availabilityBefore).contains(#"{"state":"offline"}"#)
        })
        #expect(await stack.until(timeout: .seconds(45)) { stack.payloads("strap/availability").last == #"{"state":"online"}"# })
        let before = stack.payloads("strap/sensor/heart_rate").count
        #expect(await stack.until(timeout: .seconds(30)) { stack.payloads("strap/sensor/heart_rate").count >= before + 3 })

        // find on the key finder writes a high alert level to it.
        #expect(await stack.until(timeout: .seconds(45)) { stack.payloads("tag/availability").last == #"{"state":"online"}"# })
        try await stack.request("tag/request/find", #"{"level":"high","transaction":"t1"}"#)
        #expect(await stack.until { stack.payloads("tag/response/find").last == #"{"status":"ok","data":{"level":"high"},"transaction":"t1"}"# })
        // Immediate Alert is written without response: the answer can come before the simulator has taken the write
        // off its socket (once, under the full suite's load).
        // eventually: the simulator's record of the writes, asked over its control interface.
        let alerted = await eventually(timeout: .seconds(10)) {
            (try? await stack.control.received(Self.tag, characteristic: "2a06")) == [[2]]
        }
        let written = try? await stack.control.received(Self.tag, characteristic: "2a06")
        #expect(alerted, "\(String(describing: written))")
        await stack.stop()
    }

    @Test func anMQTT5RequestIsAnsweredOnItsResponseTopicWithItsCorrelationData() async throws {
        let stack = try await Stack.start(scenarioDevices: Self.scenarioDevices, configuredDevices: Self.configuredDevices)
        #expect(await stack.until(timeout: .seconds(45)) { stack.payloads("tag/availability").last == #"{"state":"online"}"# })
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let client = try MQTTClient(configuration: MQTTClientConfiguration(
            host: "127.0.0.1", port: stack.broker.port, clientID: "asker-\(UUID().uuidString.prefix(6))",
            spoolDirectory: directory.file("spool")))
        try client.subscribe("replies/\(stack.base)")
        let running = Task { try await client.run() }
        var replies = client.messages.makeAsyncIterator()
        // The client is connected and subscribed once a message retained on its reply topic comes back to it.
        try await MosquittoClients.publish(port: stack.broker.port, topic: "replies/\(stack.base)", message: "subscribed",
                                           extraArguments: ["-r"])
        #expect(await replies.next()?.text == "subscribed", "the client never subscribed")
        client.publish(OutgoingMessage(topic: "\(stack.base)/tag/request/refresh", text: "{}", qos: .atLeastOnce,
                                       properties: MQTTProperties(responseTopic: "replies/\(stack.base)", correlationData: [7, 7, 7])))
        let reply = try #require(await replies.next())
        #expect(reply.properties.correlationData == [7, 7, 7])
        #expect(reply.text.hasPrefix(#"{"status":"ok""#))

        // A Response Topic on the gateway's own bridge/state is refused: the answer is INVALID_VALUE on the
        // contract's tag/response/find, bridge/state keeps the gateway's own payload, and the tag does not ring.
        client.publish(OutgoingMessage(topic: "\(stack.base)/tag/request/find", text: #"{"level":"high","transaction":"spoof"}"#,
                                       qos: .atLeastOnce,
                                       properties: MQTTProperties(responseTopic: "\(stack.base)/bridge/state", correlationData: [8])))
        let refusal = await stack.response("tag/response/find", transaction: "spoof")
        #expect((refusal?["error"] as? [String: Any])?["code"] as? String == "INVALID_VALUE")
        #expect(!stack.payloads("bridge/state").contains { $0.contains("spoof") })
        #expect(stack.payloads("bridge/state").last.flatMap(stack.json)?["state"] as? String == "online")
        #expect(try await stack.control.received(Self.tag, characteristic: "2a06") == [])
        await client.close()
        try await running.value
        await stack.stop()
    }

    @Test func devicesAreFoundAddedPairedTunedRenamedAndRemovedOverMQTT() async throws {
        let stack = try await Stack.start(scenarioDevices: Self.scenarioDevices, configuredDevices: nil)
        // Requests sent before the gateway subscribed would be lost: wait until it has BlueZ.
        #expect(await stack.until(timeout: .seconds(45)) { stack.payloads("bridge/info").last?.contains(#""bluez_available":true"#) == true })
        // scan streams device_found events and lists what it found.
        try await stack.request("bridge/request/scan", #"{"duration_s":3,"filter":{"uuids":["180d"]}}"#)
        #expect(await stack.until { stack.payloads("bridge/event").contains { $0.contains("device_found") && $0.contains(Self.strap) } })
        #expect(await stack.until { stack.payloads("bridge/response/scan").last?.contains(Self.strap) == true })
        #expect(stack.payloads("bridge/response/scan").last?.contains(Self.tag) == false, "the filter admits heart-rate devices only")

        // device/add: the driver is chosen from the advertisement, the id derived from driver and address.
        try await stack.request("bridge/request/device/add", #"{"address":"\#(Self.strap.lowercased())"}"#)
        let id = "standard_c0ffee000001"
        #expect(await stack.until { stack.payloads("bridge/response/device/add").last?.contains(#""id":"\#(id)""#) == true })
        #expect(await stack.until(timeout: .seconds(45)) { stack.payloads("\(id)/availability").last == #"{"state":"online"}"# })
        #expect(await stack.until { stack.payloads("bridge/devices").last?.contains(id) == true })
        try await stack.request("bridge/request/device/add", #"{"address":"\#(Self.strap)"}"#)
        #expect(await stack.until { stack.payloads("bridge/response/device/add").last?.contains("INVALID_VALUE") == true })

        // Pairing with the passkey the device shows.
        try await stack.request("bridge/request/device/pair", #"{"id":"\#(id)"}"#)
        #expect(await stack.until { stack.payloads("bridge/response/device/pair").last?.contains("code_required") == true })
        try await stack.request("bridge/request/device/pair/confirm", #"{"id":"\#(id)","code":"246810"}"#)
        #expect(await stack.until { stack.payloads("bridge/response/device/pair/confirm").last?.contains(#""paired""#) == true })

        // Batching: samples arrive as {"samples":[…]}.
        try await stack.request("bridge/request/device/options", #"{"id":"\#(id)","options":{"batch_ms":1000}}"#)
        #expect(await stack.until(timeout: .seconds(45)) { stack.payloads("\(id)/sensor/heart_rate").last?.hasPrefix(#"{"samples":["#) == true })

        // Rename: the old retained topics are cleared, the device goes on under its new id.
        try await stack.request("bridge/request/device/rename", #"{"id":"\#(id)","name":"chest"}"#)
        #expect(await stack.until(timeout: .seconds(45)) { stack.payloads("chest/availability").last == #"{"state":"online"}"# })
        #expect(await stack.until { Stack.isCleared(stack.payloads("\(id)/availability").last) })

        // Remove: gone from the list, its topics cleared; an unknown id is DEVICE_NOT_FOUND.
        try await stack.request("bridge/request/device/remove", #"{"id":"chest"}"#)
        #expect(await stack.until { stack.payloads("bridge/response/device/remove").last?.contains(#""status":"ok""#) == true })
        #expect(await stack.until { Stack.isCleared(stack.payloads("chest/availability").last) })
        #expect(await stack.until { stack.payloads("bridge/devices").last == "[]" })
        try await stack.request("bridge/request/device/remove", #"{"id":"chest"}"#)
        #expect(await stack.until { stack.payloads("bridge/response/device/remove").last?.contains("DEVICE_NOT_FOUND") == true })
        await stack.stop()
    }

    @Test func anAdapterPoweredOffAndOnIsSurvivedWithoutAnyRequest() async throws {
        let stack = try await Stack.start(scenarioDevices: Self.scenarioDevices, configuredDevices: Self.configuredDevices)
        #expect(await stack.until(timeout: .seconds(45)) { stack.payloads("strap/availability").last == #"{"state":"online"}"# })
        try await stack.control.setPowered(false)
        #expect(await stack.until(timeout: .seconds(30)) { stack.payloads("strap/availability").last == #"{"state":"offline"}"# })
        #expect(await stack.until { stack.payloads("bridge/event").contains { $0.contains("adapter_changed") && $0.contains(#""powered":false"#) } })
        try await stack.control.setPowered(true)
        #expect(await stack.until(timeout: .seconds(60)) { stack.payloads("strap/availability").last == #"{"state":"online"}"# })
        let before = stack.payloads("strap/sensor/heart_rate").count
        #expect(await stack.until(timeout: .seconds(30)) { stack.payloads("strap/sensor/heart_rate").count >= before + 3 })
        await stack.stop()
    }
}
