import BlueZ
import Gateway
import SimulatedWearables
import Testing
import Wear2MQTTTesting
import Wearables

/// The MQTT contract through a whole gateway in memory (`GatewayHarness`: the real core, device manager, sessions
/// and drivers on an `InMemoryCentral` and a recording sink): no broker, no bus, no child process.
@Suite("Gateway in memory: the contract", .timeLimit(.minutes(1)))
struct GatewayContractTests {
    static let strap = "C0:FF:EE:00:00:01"
    static let finder = "C0:FF:EE:00:00:02"
    static let devices = """
    devices:
      - address: "\(strap)"
        driver: standard
        name: strap
      - address: "\(finder)"
        driver: standard
        name: finder
    """

    /// `central`: one on a `ManualClock` where a test holds a device's answers back (`setLatency`).
    func started(central: InMemoryCentral = InMemoryCentral()) async throws -> GatewayHarness {
        let gateway = try GatewayHarness(configuration: Self.devices, central: central)
        try gateway.addDevice("heart_rate_strap", address: Self.strap, options: ["rate_hz": .int(5)])
        try gateway.addDevice("key_finder", address: Self.finder)
        await gateway.start()
        return gateway
    }

    static func code(_ response: [String: DeviceValue]?) -> String? { response?["error"]?["code"]?.text }

    @Test("a configured strap comes online: retained state with its battery, availability online, heart-rate samples")
    func configuredStrapComesOnline() async throws {
        try await withStopping(started()) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap/availability")?["state"]?.text == "online" })
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap")?["battery"]?.integer != nil })
            #expect(gateway.last("strap")?["connection"]?.text == "connected")
            #expect(gateway.last("strap")?["last_seen"]?.integer == 1_750_000_000_000, "the injected clock")
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap/sensor/heart_rate")?["bpm"]?.integer != nil })
            #expect(gateway.sink.retained("test/bridge/state") != nil)
            #expect(await gateway.until { !gateway.sink.messages(on: "test/bridge/devices").isEmpty })
        }
    }

    @Test("publishing {\"vibrations\":3} to finder/request/find rings the key finder and answers ok")
    func findRingsTheKeyFinder() async throws {
        try await withStopping(started()) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("finder")?["connection"]?.text == "connected" })
            let answer = await gateway.request("finder/request/find", #"{"vibrations":3}"#)
            #expect(answer?["status"]?.text == "ok", "\(String(describing: answer))")
            let address = try #require(BluetoothAddress(Self.finder))
            let alerts = gateway.central.writes(to: address).filter { $0.characteristic.hasPrefix("00002a06") }
            #expect(alerts.map(\.bytes) == [[2]], "one write of Alert Level high: the standard has no vibration count")
        }
    }

    @Test("bad requests get a clear error and reach no device: unknown device, bad JSON, unknown command, out of range")
    func badRequestsChangeNothing() async throws {
        try await withStopping(started()) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("finder")?["connection"]?.text == "connected" })
            let address = try #require(BluetoothAddress(Self.finder))
            let writesBefore = gateway.central.writes(to: address).count
            #expect(Self.code(await gateway.request("nobody/request/find")) == "DEVICE_NOT_FOUND")
            #expect(Self.code(await gateway.request("finder/request/find", #"{"vibrations":"#)) == "INVALID_PAYLOAD")
            #expect(Self.code(await gateway.request("finder/request/fly")) == "UNKNOWN_COMMAND")
            #expect(Self.code(await gateway.request("finder/request/find", #"{"vibrations":11}"#)) == "INVALID_VALUE")
            #expect(Self.code(await gateway.request("finder/request/find", #"{"vibrations":"3"}"#)) == "INVALID_VALUE")
            #expect(Self.code(await gateway.request("finder/request/sync")) == "NOT_SUPPORTED")
            #expect(Self.code(await gateway.request("finder/request/dfu", "{\"file\":\"a.zip\",\"sha256\":\"\(String(repeating: "0", count: 64))\"}")) == "FORBIDDEN")
            #expect(gateway.central.writes(to: address).count == writesBefore)
        }
    }

    @Test("a command to a device that went away answers DEVICE_DISCONNECTED")
    func commandToAnAbsentDevice() async throws {
        try await withStopping(started()) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("finder")?["connection"]?.text == "connected" })
            await gateway.central.setInRange(try #require(BluetoothAddress(Self.finder)), false)
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("finder/availability")?["state"]?.text == "offline" })
            #expect(Self.code(await gateway.request("finder/request/find")) == "DEVICE_DISCONNECTED")
        }
    }

    @Test("device/remove clears the device's retained state and availability")
    func removeClearsRetainedTopics() async throws {
        try await withStopping(started()) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap/availability")?["state"]?.text == "online" })
            let answer = await gateway.request("bridge/request/device/remove", #"{"id":"strap"}"#)
            #expect(answer?["status"]?.text == "ok", "\(String(describing: answer))")
            #expect(gateway.sink.wasCleared("test/strap"))
            #expect(gateway.sink.wasCleared("test/strap/availability"))
            #expect(Self.code(await gateway.request("strap/request/refresh")) == "DEVICE_NOT_FOUND")
        }
    }

    @Test("a strap whose Battery Level refuses notifications publishes heart rate and a subscription_failed event")
    func refusedBatteryNotificationsThroughTheGateway() async throws {
        let gateway = try GatewayHarness(configuration: Self.devices)
        try gateway.addDevice("heart_rate_strap", address: Self.strap)
        gateway.central.refuseNotifications("2a19")
        await gateway.start()
        await withStopping(gateway) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap/sensor/heart_rate") != nil })
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap/event")?["event"]?.text == "subscription_failed" })
        }
    }

    @Test("a flood of bad requests, a 1 MiB payload among them, is answered error by error while samples keep flowing")
    func badRequestFloodWhileSamplesFlow() async throws {
        try await withStopping(started()) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.all("strap/sensor/heart_rate").count >= 2 })
            let cases: [(topic: String, payload: String, code: String)] = [
                ("strap/request/find", "not json", "INVALID_PAYLOAD"),
                ("strap/request/find", "[1,2]", "INVALID_PAYLOAD"),
                ("finder/request/find", #"{"vibrations":"three"}"#, "INVALID_VALUE"),
                ("finder/request/find", #"{"vibrations":99}"#, "INVALID_VALUE"),
                ("strap/request/teleport", "{}", "UNKNOWN_COMMAND"),
                ("ghost/request/refresh", "{}", "DEVICE_NOT_FOUND"),
                ("strap/request/factory_reset", "{}", "FORBIDDEN"),
                ("strap/request/refresh", "{\"x\":\"" + String(repeating: "a", count: 1 << 20) + "\"}", "INVALID_PAYLOAD"),
            ]
            for _ in 0..<20 {
                for request in cases {
                    #expect(Self.code(await gateway.request(request.topic, request.payload)) == request.code, "\(request.topic)")
                }
            }
            let before = gateway.all("strap/sensor/heart_rate").count
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.all("strap/sensor/heart_rate").count >= before + 3 })
        }
    }

    @Test("a slow device delays neither another device's samples nor its commands")
    func slowDeviceDelaysNoOther() async throws {
        // The devices, and the finder's answers, run on this clock: the finder is slow for as long as the test does not
        // move it 15 s on.
        let clock = ManualClock()
        try await withStopping(started(central: InMemoryCentral(time: clock.timeSource))) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("finder/availability")?["state"]?.text == "online" })
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap/availability")?["state"]?.text == "online" })
            gateway.central.setLatency(try #require(BluetoothAddress(Self.finder)), .seconds(15))
            let asked = clock.now
            let slow = Task { await gateway.request("finder/request/refresh") }
            let samplesBefore = gateway.all("strap/sensor/heart_rate").count
            #expect(await gateway.request("strap/request/refresh")?["status"]?.text == "ok")
            // The strap's samples come as its clock moves, while the finder's answer is still on its way.
            #expect(await clock.step(by: .milliseconds(100)) { gateway.all("strap/sensor/heart_rate").count >= samplesBefore + 2 })
            #expect(gateway.sink.messages(on: "test/finder/response/refresh").isEmpty, "the slow device's answer cannot be here yet")
            #expect(await clock.step(by: .seconds(1)) { !gateway.sink.messages(on: "test/finder/response/refresh").isEmpty })
            #expect(clock.now - asked >= .seconds(15))
            #expect(await slow.value?["status"]?.text == "ok")
        }
    }
}
