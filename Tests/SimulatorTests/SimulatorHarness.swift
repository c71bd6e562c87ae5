import DBus
import Foundation
import Simulator
import Synchronization
import Testing
import Wear2MQTTTesting
import Wearables

/// A private dbus-daemon, the simulator on it (in this process), and a plain `BusConnection` as the BlueZ
/// client, recording every signal `org.bluez` sends from before the first call.
struct SimulatorHarness {
    let daemon: DBusDaemon
    let simulator: BlueZSimulator
    let client: BusConnection
    let signals: SignalRecorder

    static let strap = "C0:FF:EE:00:00:01"
    static let thermometer = "C0:FF:EE:00:00:02"
    static let oximeter = "C0:FF:EE:00:00:03"
    static let tag = "C0:FF:EE:00:00:04"
    static let adapter: ObjectPath = "/org/bluez/hci0"

    /// Four devices and fast timers; `adapterExtra` is one more adapter line, `extra` goes at the top level.
    static func scenario(gattCache: String = "always", adapterExtra: String = "", extra: String = "") -> String {
        """
        seed: 42
        adapter:
          address: "00:1A:7D:DA:71:13"
          disconnect_timer: 100ms
          gatt_cache: \(gattCache)
          \(adapterExtra)
        devices:
          - kind: heart_rate_strap
            address: \(strap)
            name: HRM-Sim
            rssi: -55
            advertising_interval: 100ms
            pairing: { method: request_passkey, passkey: 123456 }
            options: { rate_hz: 20, battery: 77, manufacturer: Polar Electro Oy, model: H10 }
          - kind: thermometer
            address: \(thermometer)
            advertising_interval: 100ms
            options: { rate_hz: 10 }
          - kind: pulse_oximeter
            address: \(oximeter)
            advertising_interval: 100ms
          - kind: key_finder
            address: \(tag)
            advertising_interval: 100ms
            pairing: { method: confirm }
        \(extra)
        """
    }

    static func start(_ yaml: String = scenario()) async throws -> SimulatorHarness {
        let daemon = try await DBusDaemon()
        let scenario = try ScenarioLoader.load(yaml: yaml)
        let client = try BusConnection(.address(daemon.address))
        let simulator = try await BlueZSimulator.start(scenario, on: .address(daemon.address))
        let signals = try await SignalRecorder(client, rule: MatchRule(sender: "org.bluez"))
        return SimulatorHarness(daemon: daemon, simulator: simulator, client: client, signals: signals)
    }

    /// Runs `body` with a started harness and stops it (the simulator and the bus daemon) however `body` ends.
    static func with(_ yaml: String = scenario(), _ body: (SimulatorHarness) async throws -> Void) async throws {
        let harness = try await start(yaml)
        do {
            try await body(harness)
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    func stop() async {
        signals.stop()
        client.close()
        await simulator.stop()
        await daemon.stop()
    }

    static func devicePath(_ address: String) -> ObjectPath {
        adapter.appending("dev_" + address.replacingOccurrences(of: ":", with: "_"))
    }

    @discardableResult
    func call(_ path: ObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue] = [],
              timeout: Duration = .seconds(10)) async throws(BusError) -> [DBusValue] {
        try await client.call(destination: "org.bluez", path: path, interface: interface, member: member,
                              arguments: arguments, timeout: timeout)
    }

    func property(_ path: ObjectPath, _ interface: String, _ name: String) async throws(BusError) -> DBusValue? {
        try await call(path, "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)]).first?.unwrapped
    }

    func setProperty(_ path: ObjectPath, _ interface: String, _ name: String, _ value: DBusValue) async throws(BusError) {
        try await call(path, "org.freedesktop.DBus.Properties", "Set", [.string(interface), .string(name), .variant(value)])
    }

    /// GetManagedObjects as path → interface → properties.
    func managedObjects() async throws(BusError) -> [ObjectPath: [String: [String: DBusValue]]] {
        let reply = try await call("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        var tree: [ObjectPath: [String: [String: DBusValue]]] = [:]
        for entry in reply.first?.dictionaryEntries ?? [] {
            guard let path = entry.key.objectPathValue else { continue }
            var interfaces: [String: [String: DBusValue]] = [:]
            for interface in entry.value.dictionaryEntries ?? [] {
                interfaces[interface.key.stringValue ?? ""] = interface.value.stringKeyedDictionary ?? [:]
            }
            tree[path] = interfaces
        }
        return tree
    }

    var control: SimulatorControlClient { SimulatorControlClient(bus: client) }

    /// Discovers with an LE filter on `uuids` until `address`'s device object exists, then stops discovery.
    func discover(_ address: String, uuids: [String] = []) async throws {
        var filter: [String: DBusValue] = ["Transport": "le"]
        if !uuids.isEmpty { filter["UUIDs"] = .strings(uuids) }
        try await call(Self.adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [.stringVariantDictionary(filter)])
        try await call(Self.adapter, "org.bluez.Adapter1", "StartDiscovery")
        _ = try await signals.next(within: .seconds(5)) { $0.isInterfacesAdded(at: Self.devicePath(address)) }
        try await call(Self.adapter, "org.bluez.Adapter1", "StopDiscovery")
    }

    /// Discovers and connects, and waits for ServicesResolved.
    func connect(_ address: String) async throws {
        let path = Self.devicePath(address)
        if try await managedObjects()[path] == nil { try await discover(address) }
        try await call(path, "org.bluez.Device1", "Connect")
        // A hang guard, not a time limit: with the whole suite on two cores a connection took over 5 s.
        _ = try await signals.next(within: .seconds(30)) { $0.changes(path, "org.bluez.Device1")?["ServicesResolved"] == true }
    }
}

/// Records signals from a rule for the lifetime of a test, so a test can wait for one that may already have come.
/// Waits are woken by each signal recorded.
final class SignalRecorder: Sendable {
    private final class Log: Sendable {
        let signals = Mutex<[BusSignal]>([])
        let changes = ChangeNotifier()
    }

    private let log = Log()
    private let task: Task<Void, Never>

    init(_ bus: BusConnection, rule: MatchRule) async throws(BusError) {
        let stream = try await bus.signals(rule)
        let log = log
        task = Task {
            for await signal in stream {
                log.signals.withLock { $0.append(signal) }
                log.changes.changed()
            }
        }
    }

    func stop() { task.cancel() }

    var all: [BusSignal] { log.signals.withLock { $0 } }

    /// Returns true as soon as `condition` holds, re-checked after every signal recorded; false after `timeout`.
    func until(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async rethrows -> Bool {
        try await log.changes.until(timeout: timeout, condition)
    }

    /// The first recorded signal (from index `from` on) matching `predicate`, waiting up to `within`.
    func first(from start: Int = 0, within timeout: Duration = .seconds(5),
               _ predicate: (BusSignal) -> Bool) async -> (index: Int, signal: BusSignal)? {
        var found: (index: Int, signal: BusSignal)?
        _ = await until(timeout: timeout) {
            let snapshot = all
            guard start < snapshot.count, let index = snapshot[start...].firstIndex(where: predicate) else { return false }
            found = (index, snapshot[index])
            return true
        }
        return found
    }

    /// Waits for a signal recorded after this call's start point (`mark`), or fails the test.
    func next(after mark: Int? = nil, within timeout: Duration = .seconds(30), _ predicate: (BusSignal) -> Bool) async throws -> BusSignal {
        guard let found = await first(from: mark ?? 0, within: timeout, predicate) else {
            throw HarnessError("no matching signal within \(timeout); got \(all.count) signals")
        }
        return found.signal
    }

    /// How many signals have been recorded so far, to wait only for later ones.
    var mark: Int { log.signals.withLock { $0.count } }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension BusSignal {
    func isInterfacesAdded(at path: ObjectPath) -> Bool {
        member == "InterfacesAdded" && body.first?.objectPathValue == path
    }

    func isInterfacesRemoved(at path: ObjectPath) -> Bool {
        member == "InterfacesRemoved" && body.first?.objectPathValue == path
    }

    /// The changed properties when this is PropertiesChanged for `interface` at `path`.
    func changes(_ path: ObjectPath, _ interface: String) -> [String: DBusValue]? {
        guard member == "PropertiesChanged", self.path == path, body.first?.stringValue == interface else { return nil }
        return body[1].stringKeyedDictionary
    }
}
