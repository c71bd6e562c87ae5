import ArgumentParser
import BlueZ
import DBus
import EventLoop
import Logging
import Wearables

/// Baseline (b), the floor (issue 43): the least any bridge can spend per notification, as a batch. Where the raw
/// relay (`relay`) handles one notification at a time through the project's event loop and libmosquitto (one
/// wake-up and one `send()` per notification), this one, per wake-up of `epoll_wait`, reads every waiting
/// notification of every ready source — `recvmmsg` on each AcquireNotify socket, or every PropertiesChanged signal
/// waiting on a signal socket read without libdbus (StartNotify; `SignalSocket`, as the gateway reads them) — encodes
/// a QoS 0 PUBLISH for each by hand, and writes them all to the broker's TCP socket in one `write`. No driver, no
/// JSON, no allocation per notification, one thread.
///
/// The devices are found and connected through the project's `BlueZClient`, whose bus connection is closed before
/// relaying (it would otherwise receive the StartNotify signals too); notifications are then subscribed on a
/// private libdbus connection of the relay's own. Run as a child process of the benchmark until SIGTERM.
struct FloorRelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "floor-relay",
        abstract: "Forward heart-rate notifications to MQTT in batches: one read per source and one write per wake-up (the benchmark's floor).")

    @OptionGroup var options: RelayOptions

    func run() async throws {
        BenchLogging.bootstrap()
        let characteristics = try await Self.connect(options.addresses, bus: options.bus)
        let relay = try FloorRelay(bus: options.bus, brokerPort: options.port)
        try relay.subscribe(characteristics, acquire: options.method == "acquire")
        try relay.run(coalescing: .milliseconds(options.coalesceMs))
    }

    /// Discovers and connects every device with the project's client, then closes that client's bus connection:
    /// each device's Heart Rate Measurement characteristic, with the topic its values go to (`relay/<address>`, as
    /// the raw relay's).
    private static func connect(_ addresses: [BluetoothAddress], bus: String) async throws -> [FloorRelay.Source] {
        let logger = Logger(label: "floor-relay")
        let loop = try EventLoop(name: "floor-setup")
        loop.start()
        let connection = try BusConnection(.address(bus), logger: logger, loop: loop)
        defer { connection.close() }
        let bluez = BlueZClient(connection: connection, logger: logger, loop: loop)
        try await bluez.start()
        var adapter: ObjectPath?
        let deadline = ContinuousClock.now + .seconds(20)
        while adapter == nil, ContinuousClock.now < deadline {
            if let found = try? bluez.adapter(), found.powered { adapter = found.path } else { try await Task.sleep(for: .milliseconds(100)) }
        }
        guard let adapter else { throw BenchError("floor-relay: no powered adapter") }
        try await bluez.startDiscovery(adapter: adapter)
        guard await bluez.wait(timeout: .seconds(60), until: { model in
            addresses.allSatisfy { model.device(address: $0, adapter: adapter) != nil }
        }) else { throw BenchError("floor-relay: not every device was discovered within 60 s") }
        try? await bluez.stopDiscovery(adapter: adapter)
        let uuid = GATTUUID.string(for: GATTUUID.Characteristic.heartRateMeasurement)
        var sources: [FloorRelay.Source] = []
        for address in addresses {
            guard let device = bluez.model.device(address: address, adapter: adapter)?.path else {
                throw BenchError("floor-relay: \(address) is not known to BlueZ")
            }
            try await retryingBlueZ { () async throws(BlueZError) in try await bluez.connect(device, timeout: .seconds(30)) }
            guard let characteristic = bluez.model.characteristic(device: device, uuid: uuid) else {
                throw BenchError("floor-relay: \(address) has no Heart Rate Measurement")
            }
            sources.append(FloorRelay.Source(characteristic: characteristic.path.rawValue,
                                             topic: Array(("relay/" + address.compactLowercase).utf8)))
        }
        return sources
    }
}
