import BlueZ
import EventLoop
import Foundation
import Synchronization
import Gateway
import MQTT
import SimulatedWearables
import Wearables

/// A whole gateway in the test's process: `GatewayCore` on an `InMemoryCentral` and a `RecordingSink`, with a fixed
/// wall clock. A test adds simulated devices, sends requests as a client would publish them, and reads the messages
/// the gateway published — the contract end to end, in milliseconds, with no broker, bus or child process.
public final class GatewayHarness: Sendable, Stoppable {
    public let central: InMemoryCentral
    public let sink = RecordingSink()
    public let core: GatewayCore
    public let base: String
    public let stateDirectory: TemporaryDirectory
    private let yaml: String
    /// The clock of the gateway (and of the harness's periodic work); the devices keep the central's.
    public let time: TimeSource
    /// Told of every message the gateway publishes and every change of its central: what `until` waits on.
    public let changes = ChangeNotifier()
    /// Whether `stop()` removes the state directory: not when a restarted gateway goes on with it.
    private let ownsState: Mutex<Bool>
    /// Closes sample batches and calm entity intervals, as the service's periodic work does; ends at `stop()`.
    private let periodic = Mutex<Task<Void, Never>?>(nil)

    /// `configuration` is YAML of everything but `mqtt` and `gateway.state_dir`, which the harness sets (base topic
    /// `test`; `mqtt` adds lines to its section, such as `username: x`,
    /// `test`, a fresh state directory unless `stateDirectory` names one). The gateway runs on the machine's monotonic
    /// clock with its wall clock standing still at `unixMilliseconds`, unless `time` is given: `.system` where wall
    /// time must pass with the devices' samples (a sliding window), a `ManualClock`'s where the test moves time.
    public init(configuration yaml: String = "", central: InMemoryCentral = InMemoryCentral(),
                stateDirectory: TemporaryDirectory? = nil, unixMilliseconds: Int64 = 1_750_000_000_000,
                time: TimeSource? = nil, gatewayID: String? = nil, room: String? = nil, mqtt: [String] = []) throws {
        self.central = central
        self.stateDirectory = try stateDirectory ?? TemporaryDirectory()
        self.yaml = yaml
        let time = time ?? .system(wallClockFixedAt: unixMilliseconds)
        self.time = time
        ownsState = Mutex(true)
        base = "test"
        let stateDirectory = self.stateDirectory
        let text = """
        mqtt:
          host: 127.0.0.1
          base_topic: \(base)
        \(mqtt.map { "  " + $0 }.joined(separator: "\n"))
        gateway:
          state_dir: \(stateDirectory.path)
          id: \(gatewayID ?? "wear2mqtt")
          room: \(room ?? "null")
        \(yaml)
        """
        let configuration = try Configuration.parse(yaml: text, source: "harness.yaml", environment: [:])
        core = GatewayCore(configuration: configuration, sink: sink, time: time)
        sink.changes.forward(to: changes)
        central.changes.forward(to: changes)
    }

    /// Hosts a simulated device of a catalog kind (`heart_rate_strap`, `bose_frames`, …) at `address`.
    @discardableResult
    public func addDevice(_ kind: String, address: String, seed: UInt64 = 7, options: [String: SimulationOptionValue] = [:],
                          known: Bool = true) throws -> any SimulatedPeripheral {
        guard let maker = SimulatedDeviceCatalog.kind(named: kind), let address = BluetoothAddress(address) else {
            throw HarnessError.unknown("\(kind) at \(address)")
        }
        let peripheral = try maker.make(SimulatedDeviceConfiguration(seed: seed, options: options, time: central.time))
        central.add(peripheral, address: address, known: known)
        return peripheral
    }

    /// The broker connection comes up and the Bluetooth stack is attached: what `GatewayService` does at start.
    public func start() async {
        let core = core
        // The durable-record queue's consumer, as the service runs it; it ends when the core stops.
        Task { await core.publishRecords() }
        periodic.withLock { task in
            task = Task {
                while !Task.isCancelled {
                    let next = core.flushDueSamples()
                    let wait = min(next.map { max(.milliseconds(5), $0 - time.now) } ?? .milliseconds(100), .milliseconds(100))
                    do { try await time.sleep(for: wait) } catch { break }
                }
            }
        }
        core.republishAll()
        await core.attach(central)
    }

    /// Publishes `payload` to `<base>/<topic>` as a client would, and returns the response's JSON object (matched by
    /// a transaction the harness adds when the payload is an object without one).
    @discardableResult
    public func request(_ topic: String, _ payload: String = "{}") async -> [String: DeviceValue]? {
        let transaction = "t\(UInt64.random(in: 0..<UInt64.max))"
        var body = payload
        if payload.hasPrefix("{"), !payload.contains("\"transaction\"") {
            let inner = payload.dropFirst().trimmingCharacters(in: .whitespaces)
            body = "{\"transaction\":\"\(transaction)\"" + (inner.hasPrefix("}") ? "" : ",") + inner
        }
        let before = sink.messages.count
        await core.handle(IncomingMessage(topic: "\(base)/\(topic)", payload: Array(body.utf8), qos: .atLeastOnce,
                                          retain: false, properties: MQTTProperties()))
        let responseTopic = "\(base)/" + topic.replacingOccurrences(of: "/request/", with: "/response/")
            .replacingOccurrences(of: "bridge/request/", with: "bridge/response/")
        return sink.messages.dropFirst(before).filter { $0.topic == responseTopic }.last.flatMap { Self.object($0.payload) }
    }

    /// A message arriving on `topic` (a full topic, not under the base): Home Assistant's status, say.
    public func receive(_ topic: String, _ payload: String) async {
        await core.handle(IncomingMessage(topic: topic, payload: Array(payload.utf8), qos: .atLeastOnce, retain: false,
                                          properties: MQTTProperties()))
    }

    /// The JSON object of the last message on `<base>/<topic>`.
    public func last(_ topic: String) -> [String: DeviceValue]? {
        sink.messages(on: "\(base)/\(topic)").last.flatMap { Self.object($0.payload) }
    }

    /// Returns true as soon as `condition` holds, re-checked whenever the gateway publishes or its central changes
    /// (a connection, a write); false if it still does not after `timeout`, a failure guard in real time.
    public func until(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async rethrows -> Bool {
        try await changes.until(timeout: timeout, condition)
    }

    /// Every JSON object published on `<base>/<topic>`, in order.
    public func all(_ topic: String) -> [[String: DeviceValue]] {
        sink.messages(on: "\(base)/\(topic)").compactMap { Self.object($0.payload) }
    }

    /// Lets the devices go and removes the state directory (unless a restarted gateway took it over).
    public func stop() async {
        periodic.withLock { $0?.cancel() }
        _ = await core.stop(timeout: .seconds(1))
        if ownsState.withLock({ $0 }) { stateDirectory.remove() }
    }

    /// Stops this gateway as SIGTERM would and starts a new one with the same configuration, state directory and
    /// devices: what a restart of the service looks like. The new harness owns the state directory.
    public func restarted() async throws -> GatewayHarness {
        ownsState.withLock { $0 = false }
        periodic.withLock { $0?.cancel() }
        _ = await core.stop(timeout: .seconds(1))
        let next = try GatewayHarness(configuration: yaml, central: central, stateDirectory: stateDirectory, time: time)
        await next.start()
        return next
    }

    /// A payload as a JSON object, nil when it is not one.
    public static func object(_ payload: [UInt8]) -> [String: DeviceValue]? {
        // What the gateway publishes may be larger than a request may be (an activity with its GPS track).
        (try? JSONParser.parse(payload, limits: JSONLimits(maximumBytes: 16 << 20)))?.object
    }

    enum HarnessError: Error { case unknown(String) }
}
