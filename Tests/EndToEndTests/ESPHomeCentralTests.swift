import BlueZ
import DBus
import ESPHome
import EventLoop
import Foundation
import Synchronization
import Testing
import Wear2MQTTTesting

/// `ESPHomeCentral` — a proxy as a `BluetoothCentral` — against `wear2mqtt-sim proxy` serving a heart-rate strap over
/// TCP: the proxy's adapter powers up, discovery finds the strap with its name and services, a connect resolves its
/// GATT objects as BlueZ shapes them, the battery reads, heart-rate notifications arrive (the CCCD written by the
/// client, as the API requires), a second connect uses the service cache, and a killed proxy disconnects the device
/// and ends its subscription. Every wait ends on a model change or a value; its limit only guards against a hang.
@Suite struct ESPHomeCentralTests {
    static let strap = "C0:FF:EE:00:00:01"
    static let scenario = """
        seed: 7
        devices:
          - kind: heart_rate_strap
            address: \(strap)
            name: HRM-Proxy
            rssi: -58
            advertising_interval: 100ms
            options: { rate_hz: 10, battery: 77 }
        """
    static let heartRateMeasurement = "00002a37-0000-1000-8000-00805f9b34fb"
    static let batteryLevel = "00002a19-0000-1000-8000-00805f9b34fb"

    @Test("discover, connect, read, notify, reconnect from the cache, and lose the proxy", arguments: [false, true])
    func strapOverAProxy(encrypted: Bool) async throws {
        let directory = try TemporaryDirectory(prefix: "esphome-central")
        defer { directory.remove() }
        let port = try FreePort.loopback()
        let key: [UInt8]? = encrypted ? (0..<32).map { UInt8($0 ^ 0x5A) } : nil
        let executable = URL(fileURLWithPath: GatewayProcess.executablePath).deletingLastPathComponent().appendingPathComponent("wear2mqtt-sim").path
        let proxy = try ChildProcess(executable: executable,
                                     arguments: ["proxy", "--port", "\(port)", "--name", "kitchen", "--slots", "2",
                                                 "--scenario", try directory.write("scenario.yaml", Self.scenario)]
                                        + (key.map { ["--key", Data($0).base64EncodedString()] } ?? []),
                                     outputPath: directory.file("proxy.out"), errorPath: directory.file("proxy.err"))
        #expect(try await proxy.waitForErrorOutput(timeout: .seconds(60)) { $0.contains("serving ESPHome's API") })
        let loop = try EventLoop.started(name: "esphome-central-test")
        defer { loop.stop() }
        var settings = ProxyClient.Settings(name: "kitchen", host: "127.0.0.1", port: port, key: key)
        settings.backoff = ReconnectBackoff(first: .milliseconds(100), maximum: .milliseconds(500))
        let central = ESPHomeCentral(settings, loop: loop)
        central.start()
        defer { central.stop() }

        let adapter = central.adapterPath
        #expect(await central.wait(timeout: .seconds(60)) { $0.adapters[adapter]?.powered == true }, "\(proxy.errorOutput)")
        try await central.startDiscovery(adapter: adapter)
        let device = ObjectPath(adapter.rawValue + "/dev_C0_FF_EE_00_00_01")
        #expect(await central.wait(timeout: .seconds(60)) { $0.devices[device] != nil })
        let info = try #require(central.model.devices[device])
        #expect(info.name == "HRM-Proxy")
        #expect(info.serviceUUIDs.contains("0000180d-0000-1000-8000-00805f9b34fb"))
        #expect(info.rssi != nil)
        try await central.stopDiscovery(adapter: adapter)

        try await central.connect(device, timeout: .seconds(30))
        let model = central.model
        #expect(model.devices[device]?.connected == true && model.devices[device]?.servicesResolved == true)
        let measurement = try #require(model.characteristics.values.first { $0.uuid == Self.heartRateMeasurement && $0.path.isDescendant(of: device) })
        let battery = try #require(model.characteristics.values.first { $0.uuid == Self.batteryLevel && $0.path.isDescendant(of: device) })
        #expect(try await central.read(battery.path, offset: 0, timeout: .seconds(10)) == [77])

        let received = Mutex<[[UInt8]]>([])
        let (arrivals, arrived) = AsyncStream.makeStream(of: Void.self)
        let subscription = try await central.subscribe(measurement.path, method: .startNotify) { value in
            received.withLock { $0.append(value) }
            arrived.yield()
        }
        var count = 0
        for await _ in arrivals {
            count += 1
            if count == 3 { break }
        }
        #expect(received.withLock { $0.count } >= 3)
        subscription.cancel()

        // Again, now from the service cache: the same objects without a listing.
        try await central.disconnect(device, timeout: .seconds(10))
        #expect(central.model.devices[device]?.connected == false)
        #expect(central.model.characteristics.keys.allSatisfy { !$0.isDescendant(of: device) })
        try await central.connect(device, timeout: .seconds(30))
        #expect(central.model.characteristics[measurement.path]?.uuid == Self.heartRateMeasurement)
        #expect(try await central.read(battery.path, offset: 0, timeout: .seconds(10)) == [77])

        // The proxy dies: the device is disconnected and its objects go; the adapter is unpowered.
        let ended = try await central.subscribe(measurement.path, method: .startNotify) { _ in }
        proxy.signal(SIGKILL)
        await proxy.waitForExit()
        #expect(await central.wait(timeout: .seconds(60)) { $0.devices[device]?.connected == false && $0.adapters[adapter]?.powered == false })
        #expect(ended.isEnded)
        await #expect(throws: BlueZError.self) { try await central.read(battery.path, offset: 0, timeout: .seconds(5)) }
    }
}
