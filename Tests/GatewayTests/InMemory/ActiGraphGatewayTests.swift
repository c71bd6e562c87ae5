import BlueZ
import Gateway
import SimulatedWearables
import Testing
import Wear2MQTTTesting
import Wearables

/// An ActiGraph Link through the whole gateway in memory: found by serial, configured with the SDK's own JSON,
/// refusing what it cannot do before anything is sent, and downloading epochs across a dropped link. The
/// end-to-end suite keeps 30 s of raw acceleration at 100 Hz arriving without loss.
@Suite("Gateway in memory: ActiGraph Link", .timeLimit(.minutes(1)))
struct ActiGraphGatewayTests {
    static let link = "C0:A6:00:00:00:01"
    static let address = BluetoothAddress(link)!
    /// 2026-11-19 00:00:00 UTC: the simulated Link's last epoch ends here, so ranges in the tests are fixed.
    static let epochEnd: Int64 = 1_795_046_400
    static let devices = """
    devices:
      - address: "\(link)"
        name: link
    """

    static func started(configured: Bool = true, options: [String: SimulationOptionValue] = [:]) async throws -> GatewayHarness {
        let gateway = try GatewayHarness(configuration: configured ? devices : "")
        try gateway.addDevice("actigraph_link", address: link, options: options.merging(["epoch_end": .int(Int(epochEnd))]) { $1 },
                              known: configured)
        await gateway.start()
        return gateway
    }

    static func error(_ response: [String: DeviceValue]?) -> (code: String?, vendor: Int64?) {
        (response?["error"]?["code"]?.text, response?["error"]?["vendor_code"]?.integer)
    }

    static func connected(_ gateway: GatewayHarness, id: String = "link") async -> Bool {
        await gateway.until(timeout: .seconds(60)) {
            gateway.last(id)?["connection"]?.text == "connected" && gateway.last(id)?["sensors"] != nil
        }
    }

    @Test("scan finds the Link by serial (the SDK's enumerateDevices), an unknown serial is code 1, a second connection code 10")
    func scanFindsTheLinkBySerial() async throws {
        try await withStopping(Self.started(configured: false)) { gateway in
            let serial = await gateway.central.inspect(Self.address)["serial"] ?? ""
            #expect(serial.hasPrefix("TAS") && serial.count == 13)

            let unknown = Self.error(await gateway.request("bridge/request/device/add", #"{"serial":"TAS9Z99999999"}"#))
            #expect(unknown.code == "DEVICE_NOT_FOUND")
            #expect(unknown.vendor == 1)

            // A scan, stopped once the Link is found (its serial in the device_found event): it answers with its finds.
            let scanning = Task { await gateway.request("bridge/request/scan", #"{"duration_s":60}"#) }
            #expect(await gateway.until {
                gateway.all("bridge/event").contains { $0["type"]?.text == "device_found" && $0["data"]?["serial"]?.text == serial }
            })
            #expect(await gateway.request("bridge/request/scan/stop")?["status"]?.text == "ok")
            let scan = try #require(await scanning.value)
            let found = try #require(scan["data"]?["devices"]?.list?.first { $0["serial"]?.text == serial })
            #expect(found["driver"]?.text == "actigraph")
            #expect(found["address"]?.text == Self.link)

            let added = try #require(await gateway.request("bridge/request/device/add", #"{"serial":"\#(serial)","name":"link"}"#))
            #expect(added["status"]?.text == "ok")
            #expect(added["data"]?["driver"]?.text == "actigraph")
            #expect(await Self.connected(gateway))

            let again = Self.error(await gateway.request("bridge/request/device/add", #"{"serial":"\#(serial)"}"#))
            #expect(again.code == "INVALID_VALUE")
            #expect(again.vendor == 10)

            // getDeviceStatus: battery, firmware, serial and the epochs the Link holds.
            let status = try #require(await gateway.request("link/request/refresh")?["data"])
            #expect(status["serial"]?.text == serial)
            #expect(status["firmware"] != nil)
            #expect(status["battery"]?.integer != nil)
            #expect((status["epochs"]?["count"]?.integer ?? 0) >= 24 * 60)
            #expect(status["epochs"]?["last_ts"]?.integer == (Self.epochEnd - 60) * 1000)
        }
    }

    @Test("the SDK's own configuration JSON works as written; unknown keys, bad rates and dates change nothing")
    func sdkExamplesAndRefusals() async throws {
        try await withStopping(Self.started()) { gateway in
            #expect(await Self.connected(gateway))
            // Seed 004's RAW Configuration Request, as written there.
            let raw = await gateway.request("link/request/configure", #"{"raw" : {"stream": true}}"#)
            #expect(raw?["status"]?.text == "ok")
            #expect(raw?["data"]?["raw"]?["stream"]?.flag == true)
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.all("link/sensor/accelerometer").count >= 60 })
            let sample = try #require(gateway.all("link/sensor/accelerometer").last)
            let magnitude = ["x", "y", "z"].map { sample[$0]?.number ?? 0 }.reduce(0) { $0 + $1 * $1 }.squareRoot()
            #expect(magnitude > 0.3 && magnitude < 3, "acceleration is in g: gravity plus motion, got \(magnitude)")

            // Its IMU Configuration Request: gyroscope and temperature on, accelerometer and magnetometer off.
            let imu = await gateway.request("link/request/configure",
                                            #"{"imu" : {"accelerometer": false, "gyroscope": true, "magnetometer": false, "temperature": true}}"#)
            #expect(imu?["status"]?.text == "ok")
            #expect(await gateway.until(timeout: .seconds(60)) {
                gateway.all("link/sensor/gyroscope").count >= 20 && gateway.all("link/sensor/temperature").count >= 2
            })
            #expect(gateway.all("link/sensor/magnetometer").isEmpty)
            #expect(gateway.all("link/sensor/temperature").last?["celsius"]?.number.map { (20...40).contains($0) } == true)
            #expect(await gateway.until {
                let sensors = gateway.last("link")?["sensors"]
                return sensors?["gyroscope"]?["enabled"]?.flag == true && sensors?["magnetometer"]?["enabled"]?.flag == false
            })

            // Its Epoch Configuration Request: a 2015 range the Link holds nothing of, answered with no epochs.
            let epoch = await gateway.request("link/request/configure",
                                              #"{"epoch" : {"startDateTime": "07-21-2015 04:05:00", "stopDateTime": "07-21-2015 04:06:00"}}"#)
            #expect(epoch?["status"]?.text == "ok")
            #expect(epoch?["data"]?["epoch"]?["epochs"]?.integer == 0)
            #expect(epoch?["data"]?["epoch"]?["startDateTime"]?.text == "07-21-2015 04:05:00")

            // Unknown keys are named with Unrecognized Configuration (3) and change nothing: raw keeps streaming.
            let requestsBefore = await gateway.central.inspect(Self.address)["requests"]
            let unknown = await gateway.request("link/request/configure", #"{"raw":{"stream":false,"rate":50},"inu":{"gyroscope":false}}"#)
            #expect(Self.error(unknown).code == "INVALID_VALUE")
            #expect(Self.error(unknown).vendor == 3)
            let message = unknown?["error"]?["message"]?.text ?? ""
            #expect(message.contains("inu") && message.contains("rate"))
            // A rate the Link cannot run (11), a bad date (8), wrong JSON: all refused before anything is sent.
            #expect(Self.error(await gateway.request("link/request/configure", #"{"sensors":{"accelerometer":{"rate_hz":200}}}"#)).vendor == 11)
            #expect(Self.error(await gateway.request("link/request/configure",
                                                     #"{"epoch":{"startDateTime":"2015-07-21","stopDateTime":"07-21-2015 04:06:00"}}"#)).vendor == 8)
            #expect(Self.error(await gateway.request("link/request/configure", "{\"raw\":")).code == "INVALID_PAYLOAD")
            let after = await gateway.central.inspect(Self.address)
            #expect(after["requests"] == requestsBefore)
            #expect(after["raw_streaming"] == "true")
        }
    }

    @Test("a two-hour epoch download reports progress, survives a failed page and a dropped link, and delivers each epoch once")
    func epochDownloadAcrossALinkDrop() async throws {
        try await withStopping(Self.started(options: ["drop_after_pages": .int(1), "fail_page": .int(0)])) { gateway in
            #expect(await Self.connected(gateway))
            let bad = Self.error(await gateway.request("link/request/sync", #"{"startDateTime":"11-18-2026 25:00:00"}"#))
            #expect(bad.code == "INVALID_VALUE")
            #expect(bad.vendor == 8)

            // 21:00:00 to 22:59:59 on 11-18-2026, as the SDK writes dates: 120 epochs on two pages. The Link fails
            // to read the first page once (asked again), then drops the link after serving it: the download resumes.
            let first = await gateway.request("link/request/sync", #"{"startDateTime":"11-18-2026 21:00:00","stopDateTime":"11-18-2026 22:59:59"}"#)
            #expect(Self.error(first).code == "DEVICE_DISCONNECTED")
            func syncStates() -> [String] { gateway.all("link").compactMap { $0["sync"]?["state"]?.text } }
            #expect(await gateway.until(timeout: .seconds(60)) { syncStates().last == "completed" })
            #expect(syncStates().contains("started"))
            #expect(syncStates().contains("downloading"))
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.sink.durableMessages.count >= 120 })
            let epochs = gateway.all("link/fitness/epoch")
            let ids = epochs.compactMap { $0["id"]?.text }
            #expect(ids.count == 120)
            #expect(Set(ids).count == ids.count)
            let times = epochs.compactMap { $0["ts"]?.integer }.sorted()
            #expect(times.first == (Self.epochEnd - 3 * 3600) * 1000)
            #expect(times.last == (Self.epochEnd - 3600 - 60) * 1000)
            let firstEpoch = try #require(epochs.first)
            for key in ["x_counts", "y_counts", "z_counts", "steps", "heart_rate", "wear"] { #expect(firstEpoch[key] != nil, "\(key)") }
            #expect(gateway.last("link")?["sync"]?["progress"]?.number == 100)
            #expect(gateway.last("link")?["sync"]?["last_ts"]?.integer == (Self.epochEnd - 3600 - 60) * 1000)

            // Another sync without a range fetches only what is newer: the last hour.
            let second = try #require(await gateway.request("link/request/sync"))
            #expect(second["data"]?["epochs"]?.integer == 60, "\(second)")
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.all("link/fitness/epoch").count == 180 })
        }
    }
}
