import EventLoop
import BlueZ
import Gateway
import SimulatedWearables
import Synchronization
import Testing
import Wear2MQTTTesting
import Wearables

/// Simulated Polar sensors through the whole gateway in memory: what the device offers in its state, every
/// `configure` and its errors, the control point's refusals with Polar's number as `vendor_code`, the streams'
/// samples on their topics, and heart-rate variability from the H10's RR intervals and the Verity Sense's PPI.
@Suite("Gateway in memory: Polar")
struct PolarGatewayTests {
    static let h10 = "A0:9E:1A:00:00:01"
    static let sense = "A0:9E:1A:00:00:02"
    static let devices = """
    devices:
      - address: "\(h10)"
        name: h10
      - address: "\(sense)"
        name: sense
    """

    static func code(_ response: [String: DeviceValue]?) -> String? { response?["error"]?["code"]?.text }

    func started(_ extra: String = "", h10Options: [String: SimulationOptionValue] = [:]) async throws -> GatewayHarness {
        let gateway = try GatewayHarness(configuration: Self.devices + "\n" + extra)
        try gateway.addDevice("polar_h10", address: Self.h10, options: h10Options)
        try gateway.addDevice("polar_verity_sense", address: Self.sense, options: ["bpm": .int(90)])
        await gateway.start()
        #expect(await gateway.until(timeout: .seconds(60)) {
            gateway.last("h10")?["capabilities"] != nil && gateway.last("sense")?["capabilities"] != nil
        })
        return gateway
    }

    @Test("the driver is chosen by advertisement and the state shows what each device offers, nothing running")
    func capabilitiesInTheState() async throws {
        try await withStopping(started()) { gateway in
            #expect(await gateway.until {
                gateway.sink.retained("test/bridge/devices").map { String(decoding: $0.payload, as: UTF8.self) }?
                    .contains(#""driver":"polar""#) == true
            })
            let h10 = try #require(gateway.last("h10"))
            #expect(h10["capabilities"]?["sensors"] == [
                "ecg": ["rate_hz": [130], "resolution": [14]],
                "accelerometer": ["rate_hz": [25, 50, 100, 200], "resolution": [16], "range": [2, 4, 8]],
            ])
            #expect(h10["model"]?.text == "H10" && h10["manufacturer"]?.text == "Polar Electro Oy" && h10["battery"]?.integer == 90)
            #expect(await gateway.until { gateway.last("h10")?["sensors"] == ["ecg": ["enabled": false], "accelerometer": ["enabled": false]] })
            let sense = try #require(gateway.last("sense"))
            #expect(sense["capabilities"]?["sensors"]?.object.map { Set($0.keys) }
                == ["ppg", "accelerometer", "ppi", "gyroscope", "magnetometer"])
            #expect(sense["capabilities"]?["sensors"]?["ppi"] == [:])
            // Heart rate flows without any request.
            #expect(await gateway.until { gateway.all("h10/sensor/heart_rate").contains { $0["rr_ms"] != nil } })
        }
    }

    @Test("configure starts ECG and ACC at the asked settings, answers with every stream, and stops one again")
    func configureStartsAndStops() async throws {
        try await withStopping(started()) { gateway in
            let answer = await gateway.request("h10/request/configure",
                                               #"{"sensors":{"ecg":{"enabled":true},"accelerometer":{"rate_hz":100,"range":4}}}"#)
            #expect(answer?["status"]?.text == "ok", "\(String(describing: answer))")
            #expect(answer?["data"]?["sensors"] == [
                "ecg": ["enabled": true, "rate_hz": 130, "resolution": 14],
                "accelerometer": ["enabled": true, "rate_hz": 100, "resolution": 16, "range": 4],
            ])
            #expect(gateway.last("h10")?["sensors"]?["accelerometer"]?["range"]?.integer == 4)
            #expect(await gateway.until { gateway.all("h10/sensor/ecg").count > 130 && gateway.all("h10/sensor/accelerometer").count > 100 })
            let ecg = gateway.all("h10/sensor/ecg")
            #expect(ecg.allSatisfy { $0["uv"]?.integer != nil && $0["ts"]?.integer != nil })
            #expect((ecg.compactMap { $0["uv"]?.integer }.max() ?? 0) > 900, "R peaks")
            let acc = try #require(gateway.last("h10/sensor/accelerometer"))
            #expect((-1.4 ... -0.6).contains(acc["z"]?.number ?? 0), "gravity in g: \(acc)")

            let stop = await gateway.request("h10/request/configure", #"{"sensors":{"ecg":{"enabled":false}}}"#)
            #expect(stop?["data"]?["sensors"]?["ecg"] == ["enabled": false])
            #expect(await gateway.until { await gateway.central.inspect(BluetoothAddress(Self.h10)!)["running"] == "acc" })
            let count = gateway.all("h10/sensor/ecg").count
            let accCount = gateway.all("h10/sensor/accelerometer").count
            #expect(await gateway.until { gateway.all("h10/sensor/accelerometer").count > accCount + 50 })
            #expect(gateway.all("h10/sensor/ecg").count <= count + 30, "at most the frames in flight")
        }
    }

    @Test("errors: unknown device, bad JSON, wrong types, unoffered rates and ranges, a stream the device lacks; nothing written")
    func refusedRequests() async throws {
        try await withStopping(started()) { gateway in
            let address = BluetoothAddress(Self.h10)!
            let writes = gateway.central.writes(to: address).count
            let refused: [(String, String)] = [
                (#"{"sensors":{"accelerometer":{"rate_hz":52}}}"#, "sensors.accelerometer.rate_hz must be one of 25, 50, 100 or 200 Hz"),
                (#"{"sensors":{"accelerometer":{"range":16}}}"#, "sensors.accelerometer.range must be one of 2, 4 or 8"),
                (#"{"sensors":{"accelerometer":{"rate_hz":"fast"}}}"#, "sensors.accelerometer.rate_hz must be an integer"),
                (#"{"sensors":{"ecg":{"enabled":1}}}"#, "sensors.ecg.enabled must be true or false"),
                (#"{"sensors":{"ppg":{"enabled":true}}}"#, "sensors.ppg: this device does not offer ppg"),
                (#"{"sensors":{"ecg":{"range":2}}}"#, "sensors.ecg.range: this stream has no range setting"),
                (#"{"sensors":[]}"#, "sensors"),
                (#"{"ecg":{"enabled":true}}"#, "unknown field \"ecg\""),
            ]
            for (body, message) in refused {
                let error = await gateway.request("h10/request/configure", body)?["error"]
                #expect(error?["code"]?.text == "INVALID_VALUE", "\(body)")
                #expect(error?["message"]?.text?.hasPrefix(message) == true, "\(body): \(String(describing: error))")
            }
            #expect(Self.code(await gateway.request("h10/request/configure", #"{"sensors":{"#)) == "INVALID_PAYLOAD")
            #expect(Self.code(await gateway.request("nobody/request/configure", #"{"sensors":{}}"#)) == "DEVICE_NOT_FOUND")
            #expect(Self.code(await gateway.request("h10/request/find", "{}")) == "NOT_SUPPORTED")
            #expect(gateway.central.writes(to: address).count == writes)
            #expect(await gateway.request("h10/request/refresh")?["status"]?.text == "ok")
        }
    }

    @Test("the device's refusal is the contract's code with Polar's number: in charger 13, MTU too small 10")
    func controlPointErrors() async throws {
        try await withStopping(started(h10Options: ["start_error": .int(13), "start_error_sensor": .string("accelerometer")])) { gateway in
            let charging = await gateway.request("h10/request/configure", #"{"sensors":{"ecg":{},"accelerometer":{"rate_hz":25}}}"#)
            #expect(Self.code(charging) == "BUSY", "\(String(describing: charging))")
            #expect(charging?["error"]?["vendor_code"]?.integer == 13)
            #expect(charging?["error"]?["message"]?.text == "the device refused starting accelerometer: device in charger")
            // ECG (type 0) started before the accelerometer was refused: it keeps running, and the state says so.
            #expect(await gateway.until { gateway.last("h10")?["sensors"]?["accelerometer"]?["enabled"] == false })
            #expect(gateway.last("h10")?["sensors"]?["ecg"]?["enabled"] == true)
            #expect(await gateway.until { gateway.all("h10/sensor/ecg").count > 20 })

            // A sensor that needs a larger MTU than the link has (the in-memory link's is 247).
            let small = try GatewayHarness(configuration: "devices:\n  - address: \"\(Self.sense)\"\n    name: sense")
            try small.addDevice("polar_verity_sense", address: Self.sense, options: ["minimum_mtu": .int(300)])
            await small.start()
            await withStopping(small) { small in
                #expect(await small.until(timeout: .seconds(60)) { small.last("sense")?["capabilities"] != nil })
                let mtu = await small.request("sense/request/configure", #"{"sensors":{"ppg":{}}}"#)
                #expect(Self.code(mtu) == "NOT_SUPPORTED" && mtu?["error"]?["vendor_code"]?.integer == 10, "\(String(describing: mtu))")
            }
        }
    }

    @Test("a link that drops while the device has not answered yet: DEVICE_DISCONNECTED; the streams start again on reconnect")
    func linkDropsMidCommand() async throws {
        try await withStopping(started()) { gateway in
            let address = BluetoothAddress(Self.h10)!
            #expect(await gateway.request("h10/request/configure", #"{"sensors":{"accelerometer":{"rate_hz":50}}}"#)?["status"]?.text == "ok")
            // A write that cannot finish before the link drops, however loaded the machine; a drop that comes before the
            // write is sent gets the same answer (the device is not connected).
            gateway.central.setLatency(address, .seconds(20))
            async let answer = gateway.request("h10/request/configure", #"{"sensors":{"ecg":{}}}"#)
            await gateway.central.dropLink(address)
            let dropped = await answer
            #expect(Self.code(dropped) == "DEVICE_DISCONNECTED", "\(String(describing: dropped))")
            gateway.central.setLatency(address, nil)
            // The accelerometer asked for before comes back by itself on the next connection.
            let count = gateway.all("h10/sensor/accelerometer").count
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.all("h10/sensor/accelerometer").count > count + 50 })
        }
    }

    @Test("devices[].configure starts streams on connect, and a request replacing it outlives a restart of the gateway")
    func configurationOutlivesARestart() async throws {
        let gateway = try GatewayHarness(configuration: """
        devices:
          - address: "\(Self.h10)"
            name: h10
            configure:
              sensors: { ecg: {} }
        """)
        try gateway.addDevice("polar_h10", address: Self.h10)
        await gateway.start()
        #expect(await gateway.until(timeout: .seconds(60)) { gateway.all("h10/sensor/ecg").count > 50 })
        let swap = await gateway.request("h10/request/configure",
                                         #"{"sensors":{"ecg":{"enabled":false},"accelerometer":{"rate_hz":25,"range":2}}}"#)
        #expect(swap?["status"]?.text == "ok")
        // The device forgets its streams when the gateway lets it go; the new gateway starts what the request left.
        try await withStopping(gateway.restarted()) { restarted in
            #expect(await restarted.until(timeout: .seconds(60)) { restarted.all("h10/sensor/accelerometer").count > 25 })
            #expect(await restarted.until { restarted.last("h10")?["sensors"]?["accelerometer"]?["rate_hz"] == 25 })
            #expect(restarted.last("h10")?["sensors"]?["ecg"]?["enabled"] == false)
            #expect(restarted.all("h10/sensor/ecg").isEmpty)
        }
    }

    @Test("on a 23-byte MTU the settings arrive in parts and are read whole; a stream that cannot fit is NOT_SUPPORTED (10)")
    func smallMTU() async throws {
        let gateway = try GatewayHarness(configuration: "devices:\n  - address: \"\(Self.sense)\"\n    name: sense",
                                         central: InMemoryCentral(mtu: 23))
        try gateway.addDevice("polar_verity_sense", address: Self.sense)
        await gateway.start()
        await withStopping(gateway) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("sense")?["capabilities"] != nil })
            #expect(gateway.last("sense")?["capabilities"]?["sensors"]?["gyroscope"]?["range"] == [250, 500, 1000, 2000])
            let ppg = await gateway.request("sense/request/configure", #"{"sensors":{"ppg":{}}}"#)
            #expect(Self.code(ppg) == "NOT_SUPPORTED" && ppg?["error"]?["vendor_code"]?.integer == 10, "\(String(describing: ppg))")
            #expect(await gateway.request("sense/request/configure", #"{"sensors":{"gyroscope":{"range":250}}}"#)?["status"]?.text == "ok")
            #expect(await gateway.until { gateway.all("sense/sensor/gyroscope").count > 20 })
        }
    }

    @Test("the Verity Sense streams PPG, PPI with its quality marks, gyroscope and magnetometer; taken off, it says so")
    func veritySenseStreams() async throws {
        try await withStopping(started()) { gateway in
            let answer = await gateway.request("sense/request/configure",
                                               #"{"sensors":{"ppg":{},"ppi":{},"gyroscope":{"range":2000},"magnetometer":{"rate_hz":50},"accelerometer":{}}}"#)
            #expect(answer?["status"]?.text == "ok", "\(String(describing: answer))")
            #expect(await gateway.until {
                !gateway.all("sense/sensor/ppi").isEmpty && gateway.all("sense/sensor/ppg").count > 55
                    && gateway.all("sense/sensor/gyroscope").count > 50 && gateway.all("sense/sensor/magnetometer").count > 50
            })
            let ppi = try #require(gateway.all("sense/sensor/ppi").first)
            #expect(abs(Double(ppi["interval_ms"]?.integer ?? 0) - 666.7) < 25, "\(ppi)")
            #expect(ppi["error_ms"]?.integer == 10 && ppi["blocker"] == false && ppi["contact"] == true && ppi["bpm"]?.integer != nil)
            #expect(gateway.last("sense/sensor/ppg")?["values"]?.list?.count == 3 && gateway.last("sense/sensor/ppg")?["ambient"] == 1200)
            #expect(abs((gateway.last("sense/sensor/magnetometer")?["z"]?.number ?? 0) + 45) < 1, "µT")

            #expect(await gateway.central.trigger(.buttonPress, on: BluetoothAddress(Self.sense)!))
            #expect(await gateway.until { gateway.last("sense/event")?["event"]?.text == "measurement_stopped" })
            #expect(gateway.last("sense/event")?["sensors"]?.list?.count == 5)
            // The state keeps the settings a stream last ran with; `enabled` says it stopped.
            #expect(await gateway.until { gateway.last("sense")?["sensors"]?["ppg"]?["enabled"] == false })
            #expect(gateway.last("sense")?["sensors"]?["ppg"]?["rate_hz"] == 55)
        }
    }

    @Test("sensor/hrv from the H10's RR intervals and from the Verity Sense's PPI, at their heart rates")
    func heartRateVariability() async throws {
        // The devices and the gateway share one clock, moved here: connecting, the Verity Sense's answer and the windows
        // filling all take the test's steps, not the machine's time.
        let clock = ManualClock()
        let gateway = try GatewayHarness(configuration: Self.devices + "\nhrv:\n  window_s: 30\n  interval_s: 2",
                                         central: InMemoryCentral(time: clock.timeSource), time: clock.timeSource)
        try gateway.addDevice("polar_h10", address: Self.h10, options: ["bpm": .int(150)])
        try gateway.addDevice("polar_verity_sense", address: Self.sense, options: ["bpm": .int(90)])
        await gateway.start()
        try await withStopping(gateway) { gateway in
            #expect(await clock.step(by: .milliseconds(10)) {
                gateway.last("h10")?["capabilities"] != nil && gateway.last("sense")?["capabilities"] != nil
            })
            let answer = Mutex<[String: DeviceValue]??>(nil)
            Task {
                let configured = await gateway.request("sense/request/configure", #"{"sensors":{"ppi":{}}}"#)
                answer.withLock { $0 = .some(configured) }
            }
            #expect(await clock.step(by: .milliseconds(10)) { answer.withLock { $0 } != nil })
            #expect(answer.withLock { $0 }??["status"]?.text == "ok")
            #expect(await clock.step(by: .milliseconds(100)) {
                gateway.last("h10/sensor/hrv")?["rmssd_ms"] != nil && gateway.last("sense/sensor/hrv")?["rmssd_ms"] != nil
            })
            for (device, bpm) in [("h10", 150.0), ("sense", 90.0)] {
                let hrv = try #require(gateway.last("\(device)/sensor/hrv"))
                let meanHR = try #require(hrv["mean_hr_bpm"]?.number)
                #expect(abs(meanHR - bpm) < bpm * 0.03, "\(device): \(hrv)")
                let rmssd = try #require(hrv["rmssd_ms"]?.number)
                #expect(rmssd > 0 && rmssd < 60, "\(device): \(hrv)")
            }
        }
    }
}
