import BlueZ
import Gateway
import SimulatedWearables
import Synchronization
import Testing
import Wear2MQTTTesting
import Wearables

/// Bose Frames through the whole gateway in memory: configurations refused before any write, the device's own
/// refusals reported, the driver chosen from the advertisement, and the configuration file and a request
/// outliving a restart. The end-to-end suite keeps the IMU streams at their rate across a dropped link.
@Suite("Gateway in memory: Bose Frames", .timeLimit(.minutes(1)))
struct BoseGatewayTests {
    static let frames = "B0:5E:00:00:00:01"
    static let silentFrames = "B0:5E:00:00:00:02"
    static let address = BluetoothAddress(frames)!
    /// SensorConfiguration, where every configuration is written.
    static let sensorConfiguration = "5af38af6-000e-404b-9b46-07f77580890b"

    static let devices = """
    devices:
      - address: "\(frames)"
        name: frames
      - address: "\(silentFrames)"
        name: silent
    """

    static func code(_ response: [String: DeviceValue]?) -> String? { response?["error"]?["code"]?.text }

    func configurationWrites(_ gateway: GatewayHarness) -> [[UInt8]] {
        gateway.central.writes(to: Self.address).filter { $0.characteristic == Self.sensorConfiguration }.map(\.bytes)
    }

    func sensor(_ state: [String: DeviceValue]?, _ name: String) -> (enabled: Bool?, period: Int64?) {
        let sensor = state?["sensors"]?[name]
        return (sensor?["enabled"]?.flag, sensor?["period_ms"]?.integer)
    }

    @Test("bad configurations are refused before any write; the device's refusal and silence are reported")
    func badConfigurationsChangeNothing() async throws {
        // The driver waits for a configuration's confirmation on the gateway's clock, moved here; the devices keep the
        // machine's.
        let clock = ManualClock()
        let gateway = try GatewayHarness(configuration: Self.devices, time: clock.timeSource)
        try gateway.addDevice("bose_frames", address: Self.frames)
        try gateway.addDevice("bose_frames", address: Self.silentFrames, options: ["confirm_configuration": .bool(false)])
        await gateway.start()
        await withStopping(gateway) { gateway in
            #expect(await gateway.until(timeout: .seconds(60)) {
                gateway.last("frames")?["capabilities"] != nil && gateway.last("silent")?["capabilities"] != nil
            })
            let good = await gateway.request("frames/request/configure", #"{"sensors":{"accelerometer":{"period_ms":40}}}"#)
            #expect(good?["status"]?.text == "ok", "\(String(describing: good))")
            let written = configurationWrites(gateway).count

            let refused: [(String, String)] = [
                (#"{"sensors":{"accelerometer":{"period_ms":30}}}"#, "sensors.accelerometer.period_ms"),
                (#"{"sensors":{"gyroscope":{"period_ms":20}}}"#, "sensors"),
                (#"{"sensors":{"gyroscope":{"period_ms":40},"rotation":{"period_ms":40},"magnetometer":{"period_ms":40}}}"#, "sensors"),
                (#"{"sensors":{"heart_rate":{"period_ms":40}}}"#, "sensors.heart_rate"),
                (#"{"sensors":{"accelerometer":{"period_ms":"fast"}}}"#, "sensors.accelerometer.period_ms"),
                (#"{"gestures":{"wink":true}}"#, "gestures.wink"),
                (#"{"raw_stream":true}"#, "raw_stream"),
            ]
            for (body, field) in refused {
                let error = await gateway.request("frames/request/configure", body)?["error"]
                #expect(error?["code"]?.text == "INVALID_VALUE", "\(body)")
                let message = error?["message"]?.text ?? ""
                #expect(message.hasPrefix(field + ":") || message.hasPrefix(field + " ") || message.contains("\"\(field)\""),
                        "\(body): \(String(describing: error))")
            }
            #expect(Self.code(await gateway.request("frames/request/configure", #"{"sensors":{"#)) == "INVALID_PAYLOAD")
            #expect(Self.code(await gateway.request("nobody/request/configure", #"{"sensors":{}}"#)) == "DEVICE_NOT_FOUND")

            // Nothing was written for any of them, and the accelerometer still streams at 40 ms.
            #expect(configurationWrites(gateway).count == written)
            #expect(sensor(gateway.last("frames"), "accelerometer") == (true, 40))
            let count = gateway.all("frames/sensor/accelerometer").count
            #expect(await gateway.until { gateway.all("frames/sensor/accelerometer").count > count + 20 })

            // The device refuses a write (the SDK's didFailToWriteSensorConfiguration): an error with its ATT code.
            gateway.central.failNextWrite(Self.address, with: .failed(name: "org.bluez.Error.Failed",
                                                                      message: "Operation failed with ATT error: 0x81"))
            let rejected = await gateway.request("frames/request/configure", #"{"sensors":{"accelerometer":{"period_ms":80}}}"#)?["error"]
            #expect(rejected?["code"]?.text == "INVALID_VALUE")
            #expect(rejected?["vendor_code"]?.integer == 0x81)

            // A device that accepts the write but never notifies the new configuration: TIMEOUT, not ok, once the
            // driver's 5 s have passed.
            let asked = clock.now
            let answer = Mutex<[String: DeviceValue]??>(nil)
            Task {
                let quiet = await gateway.request("silent/request/configure", #"{"sensors":{"accelerometer":{"period_ms":20}}}"#)
                answer.withLock { $0 = .some(quiet) }
            }
            #expect(await clock.step(by: .milliseconds(500)) { answer.withLock { $0 } != nil })
            let quiet = answer.withLock { $0 } ?? nil
            #expect(Self.code(quiet) == "TIMEOUT", "\(String(describing: quiet))")
            #expect(clock.now - asked >= .seconds(5))
        }
    }

    @Test("a device added over MQTT without a scan gets the Bose driver from its advertisement")
    func addedDeviceGetsTheBoseDriver() async throws {
        let gateway = try GatewayHarness()
        try gateway.addDevice("bose_frames", address: Self.frames)
        await gateway.start()
        try await withStopping(gateway) { gateway in
            let answer = try #require(await gateway.request("bridge/request/device/add", #"{"address":"\#(Self.frames)"}"#))
            #expect(answer["data"]?["driver"]?.text == "bose", "\(answer)")
            #expect(answer["data"]?["id"]?.text == "bose_b05e00000001")
            #expect(await gateway.until(timeout: .seconds(60)) { gateway.last("bose_b05e00000001")?["capabilities"] != nil })
        }
    }

    @Test("devices[].configure applies on connect, and a request replacing it outlives a restart of the gateway")
    func configurationFileAndRequestOutliveARestart() async throws {
        let gateway = try GatewayHarness(configuration: """
        devices:
          - address: "\(Self.frames)"
            name: frames
            configure:
              sensors: { accelerometer: { period_ms: 40 } }
              gestures: { double_tap: true }
        """)
        try gateway.addDevice("bose_frames", address: Self.frames)
        await gateway.start()
        // The configuration file's sensors stream with no request at all.
        #expect(await gateway.until(timeout: .seconds(60)) { gateway.all("frames/sensor/accelerometer").count >= 20 })
        #expect(await gateway.until { sensor(gateway.last("frames"), "accelerometer") == (true, 40) })
        // The gestures are written after the sensors, and the state follows each write.
        #expect(await gateway.until { gateway.last("frames")?["gestures"]?["double_tap"]?.flag == true })

        // A request replaces it...
        let swap = await gateway.request("frames/request/configure",
                                         #"{"sensors":{"accelerometer":{"enabled":false},"gyroscope":{"period_ms":80}}}"#)
        #expect(swap?["status"]?.text == "ok")
        let writesBefore = configurationWrites(gateway).count

        // ...and outlives a restart: the device is let go on shutdown, forgets everything, and the new gateway
        // writes the requested configuration again (from state_dir/devices.json).
        try await withStopping(gateway.restarted()) { restarted in
            #expect(await restarted.until(timeout: .seconds(60)) { configurationWrites(restarted).count > writesBefore })
            let last = configurationWrites(restarted).last ?? []
            let entries = stride(from: 0, to: last.count - 2, by: 3).map { (last[$0], Int(last[$0 + 1]) << 8 | Int(last[$0 + 2])) }
            let periods = Dictionary(entries, uniquingKeysWith: { $1 })
            #expect(periods[0] == 0 && periods[1] == 80, "accelerometer off, gyroscope at 80 ms: \(last)")
            #expect(await restarted.until(timeout: .seconds(60)) { restarted.all("frames/sensor/gyroscope").count >= 20 })
        }
    }
}
