import ArgumentParser
import BlueZ
import DBus
import EventLoop
import Foundation
import Logging
import MQTT
import Wearables

/// Baseline (a), the raw relay limit: the least a bridge can do with the same notifications. It connects to the
/// devices through the project's `BlueZClient`, subscribes to each Heart Rate Measurement (AcquireNotify or
/// StartNotify, as asked), and publishes every value's bytes unchanged to `relay/<address>` at QoS 0 through the
/// project's `MQTTClient`: no driver, no decoding, no JSON, no batching, no state. The gateway's figures divided
/// by the relay's are what the gateway's own layers cost.
///
/// Like the gateway, it runs on one event loop (notification sockets, the bus, the broker's socket) with the same
/// coalescing window, so the two differ only by the gateway's own layers.
///
/// Run as a child process of the benchmark (so its CPU and memory are measured like the gateway's) until SIGTERM.
struct RelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "Forward heart-rate notifications from BlueZ to MQTT unchanged (the benchmark's baseline).")

    @OptionGroup var options: RelayOptions

    @Option(help: "Directory for the MQTT client's spool (unused at QoS 0, but the client wants one).")
    var spoolDirectory: String

    func run() async throws {
        BenchLogging.bootstrap()
        let logger = Logger(label: "relay")
        let loop = try EventLoop(name: "data-path")
        loop.coalescingWindow = .milliseconds(options.coalesceMs)
        loop.start()
        let connection = try BusConnection(.address(options.bus), logger: logger, loop: loop)
        let bluez = BlueZClient(connection: connection, logger: logger, loop: loop)
        try await bluez.start()
        let mqtt = try MQTTClient(configuration: MQTTClientConfiguration(
            host: "127.0.0.1", port: options.port, clientID: "wear2mqtt-bench-relay-\(getpid())", spoolDirectory: spoolDirectory,
            offlineQueueCapacity: 100_000), loop: loop)
        let notifyMethod: NotifyMethod = options.method == "start_notify" ? .startNotify : .acquire

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await mqtt.run() }
            let adapter = try await Self.adapter(bluez)
            try await bluez.startDiscovery(adapter: adapter)
            let wanted = options.addresses
            guard await bluez.wait(timeout: .seconds(60), until: { model in
                wanted.allSatisfy { model.device(address: $0, adapter: adapter) != nil }
            }) else { throw BenchError("relay: not every device was discovered within 60 s") }
            try? await bluez.stopDiscovery(adapter: adapter)
            for address in wanted {
                group.addTask {
                    try await Self.relay(address, adapter: adapter, bluez: bluez, mqtt: mqtt, method: notifyMethod)
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    private static func adapter(_ bluez: BlueZClient) async throws -> ObjectPath {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if let adapter = try? bluez.adapter(), adapter.powered { return adapter.path }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw BenchError("relay: no powered adapter")
    }

    /// One device: connect, subscribe, copy every notification's bytes to `relay/<address>`.
    private static func relay(_ address: BluetoothAddress, adapter: ObjectPath, bluez: BlueZClient, mqtt: MQTTClient,
                              method: NotifyMethod) async throws {
        guard let device = bluez.model.device(address: address, adapter: adapter)?.path else {
            throw BenchError("relay: \(address) is not known to BlueZ")
        }
        try await retryingBlueZ { () async throws(BlueZError) in try await bluez.connect(device, timeout: .seconds(30)) }
        let uuid = GATTUUID.string(for: GATTUUID.Characteristic.heartRateMeasurement)
        guard let characteristic = bluez.model.characteristic(device: device, uuid: uuid) else {
            throw BenchError("relay: \(address) has no Heart Rate Measurement")
        }
        let topic = "relay/" + address.compactLowercase
        let subscription = try await bluez.subscribe(characteristic.path, method: method) { value in
            mqtt.publish(OutgoingMessage(topic: topic, payload: value))
        }
        await subscription.ended()
    }
}

/// swift-log to stderr, warnings and worse: the bench and its relay stay quiet while measuring.
enum BenchLogging {
    static func bootstrap() {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
    }
}
