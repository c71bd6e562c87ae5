import BlueZ
import Gateway
import Logging
import Testing
import Wear2MQTTTesting
import Wearables

/// `bridge/request/options`, `bridge/request/health_check` and `devices[].options` through a whole gateway in memory.
@Suite("Gateway in memory: runtime options and health check")
struct RuntimeOptionsGatewayTests {
    static let strap = "C0:FF:EE:00:00:11"

    /// `clock`: the strap's and the gateway's, where the test moves time (a batch window).
    func started(options: String = "", clock: ManualClock? = nil) async throws -> GatewayHarness {
        let central = clock.map { InMemoryCentral(time: $0.timeSource) } ?? InMemoryCentral()
        let gateway = try GatewayHarness(configuration: """
        devices:
          - address: "\(Self.strap)"
            driver: standard
            name: strap\(options)
        """, central: central, time: clock?.timeSource)
        try gateway.addDevice("heart_rate_strap", address: Self.strap, options: ["rate_hz": .int(5)])
        await gateway.start()
        return gateway
    }

    @Test("options changes the log level and the health interval, answers the values now in force, and an empty one reads them")
    func optionsChangeLogLevelAndHealthInterval() async throws {
        try await withStopping(started()) { gateway in
            let read = await gateway.request("bridge/request/options", #"{"options":{}}"#)
            #expect(read?["status"]?.text == "ok", "\(String(describing: read))")
            #expect(read?["data"]?["log_level"]?.text == "info")
            #expect(read?["data"]?["health_interval_s"]?.integer == 60)
            let changed = await gateway.request("bridge/request/options", #"{"options":{"log_level":"debug","health_interval_s":15}}"#)
            #expect(changed?["data"]?["log_level"]?.text == "debug")
            #expect(changed?["data"]?["health_interval_s"]?.integer == 15)
            #expect(gateway.core.runtime.logLevel == .debug)
            #expect(gateway.core.runtime.healthIntervalSeconds == 15)
        }
    }

    @Test("a bad options request is refused whole: wrong level, out-of-range interval, unknown field, unknown device")
    func badOptionsChangeNothing() async throws {
        try await withStopping(started()) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap")?["connection"]?.text == "connected" })
            for (payload, code) in [
                (#"{"options":{"log_level":"loud"}}"#, "INVALID_VALUE"),
                (#"{"options":{"health_interval_s":1}}"#, "INVALID_VALUE"),
                (#"{"options":{"health_interval_s":"60"}}"#, "INVALID_VALUE"),
                (#"{"options":{"colour":"red"}}"#, "INVALID_VALUE"),
                (#"{"options":{"log_level":"debug","devices":{"strap":{"batch_ms":-1}}}}"#, "INVALID_VALUE"),
                (#"{"options":{"log_level":"debug","devices":{"nobody":{"batch_ms":100}}}}"#, "DEVICE_NOT_FOUND"),
                (#"{"options":"debug"}"#, "INVALID_VALUE"),
                (#"not json"#, "INVALID_PAYLOAD"),
            ] {
                let answer = await gateway.request("bridge/request/options", payload)
                #expect(answer?["status"]?.text == "error", "\(payload)")
                let got = answer?["error"]?["code"]?.text
                #expect(got == code || (code == "INVALID_VALUE" && got == "INVALID_TYPE"), "\(payload): \(String(describing: answer))")
            }
            #expect(gateway.core.runtime.logLevel == .info, "nothing changed")
            #expect(gateway.core.runtime.healthIntervalSeconds == 60)
            let strap = await gateway.request("bridge/request/device/options", #"{"id":"strap","options":{}}"#)
            #expect(strap?["data"]?["options"]?["batch_ms"]?.integer == 0)
        }
    }

    @Test("options sets several devices' options at once, as device/options would")
    func optionsSetDeviceOptions() async throws {
        let clock = ManualClock()
        try await withStopping(started(clock: clock)) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap")?["connection"]?.text == "connected" })
            let answer = await gateway.request("bridge/request/options", #"{"options":{"devices":{"strap":{"batch_ms":250}}}}"#)
            #expect(answer?["data"]?["devices"]?["strap"]?["batch_ms"]?.integer == 250, "\(String(describing: answer))")
            let strap = await gateway.request("bridge/request/device/options", #"{"id":"strap","options":{}}"#)
            #expect(strap?["data"]?["options"]?["batch_ms"]?.integer == 250)
            // The strap's samples and the 250 ms windows come as the clock moves.
            #expect(await clock.step(by: .milliseconds(50)) { gateway.last("strap/sensor/heart_rate")?["samples"] != nil },
                    "samples now come in batches")
        }
    }

    @Test("devices[].options of config.yaml apply from the start")
    func configuredOptions() async throws {
        try await withStopping(started(options: "\n    options: {batch_ms: 300, notify: start_notify}")) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap")?["connection"]?.text == "connected" })
            let strap = await gateway.request("bridge/request/device/options", #"{"id":"strap","options":{}}"#)
            #expect(strap?["data"]?["options"]?["batch_ms"]?.integer == 300, "\(String(describing: strap))")
            #expect(strap?["data"]?["options"]?["notify"]?.text == "start_notify")
        }
    }

    @Test("health_check: healthy once the strap is connected; with it gone, unhealthy and says why")
    func healthCheck() async throws {
        try await withStopping(started()) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap")?["connection"]?.text == "connected" })
            let healthy = await gateway.request("bridge/request/health_check")
            #expect(healthy?["data"]?["healthy"]?.flag == true, "\(String(describing: healthy))")
            #expect(healthy?["data"]?["devices"]?["connected"]?.integer == 1)
            let refused = await gateway.request("bridge/request/health_check", #"{"verbose":true}"#)
            #expect(refused?["status"]?.text == "error")
            let address = try #require(BluetoothAddress(Self.strap))
            await gateway.central.setInRange(address, false)
            // The session's state changes before the state document says so.
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("strap")?["connection"]?.text == "disconnected" })
            let unhealthy = await gateway.request("bridge/request/health_check")
            #expect(unhealthy?["data"]?["healthy"]?.flag == false, "\(String(describing: unhealthy))")
            #expect(unhealthy?["data"]?["problems"]?.list?.contains(.text("1 of 1 devices are not connected")) == true)
        }
    }
}
