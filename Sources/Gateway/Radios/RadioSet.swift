import BlueZ
import DBus
import Synchronization

/// Several radios — the local BlueZ and ESPHome proxies — as one `BluetoothCentral`: one model holding every radio's
/// tree side by side (each under its own adapter object), every radio's events, and each operation sent to the radio
/// whose adapter the path lies under. Device sessions pick the adapter (`RadioChoice`); everything else is unchanged.
public final class RadioSet: BluetoothCentral {
    public let members: [any BluetoothCentral]
    private let listeners = ModelEventListeners()
    private let forwarders = Mutex<[Task<Void, Never>]>([])
    /// The members' models merged, rebuilt on the first read after a member's event: every waiting session reads the
    /// model at each event (a proxy's every advertisement is one), and merging per read made the gateway's CPU grow
    /// with the cube of the proxies (issue 42's benchmark: 8 proxies took 1.5 cores).
    private let merged = Mutex<(generation: UInt64, model: BlueZModel?)>((0, nil))

    public init(_ members: [any BluetoothCentral]) {
        self.members = members
        // One long-lived forwarder per radio, fanned out to every listener (a `wait` asks for events often).
        let tasks = members.map { member in
            let updates = member.events()
            return Task { [weak self] in
                for await event in updates {
                    // Stale from now: cleared before the listeners hear of the event, so what they read has it.
                    self?.merged.withLock { $0 = ($0.generation &+ 1, nil) }
                    self?.listeners.announce([event])
                }
            }
        }
        forwarders.withLock { $0 = tasks }
    }

    deinit {
        for task in forwarders.withLock({ $0 }) { task.cancel() }
    }

    public var model: BlueZModel {
        let (generation, cached) = merged.withLock { $0 }
        if let cached { return cached }
        var model = BlueZModel()
        for member in members { model.merge(member.model) }
        // A member's event may have come while this was merging: kept only if none did.
        merged.withLock { if $0.generation == generation { $0.model = model } }
        return model
    }

    public var isServiceAvailable: Bool { members.contains { $0.isServiceAvailable } }

    public var dbusErrorCounts: [String: UInt64] {
        members.reduce(into: [:]) { counts, member in counts.merge(member.dbusErrorCounts) { $0 + $1 } }
    }

    public func events() -> AsyncStream<BlueZModelEvent> { listeners.stream() }

    /// Discovery on one adapter is discovery on every radio: a scan, or a device looked for, may be heard by any of
    /// them. The named adapter's errors are the caller's; another radio's (a proxy not connected now) are not.
    public func startDiscovery(adapter: ObjectPath, filter: DiscoveryFilter) async throws(BlueZError) {
        let named = try radio(for: adapter)
        // The others first: a proxy not connected yet must not keep the local adapter from looking.
        for (member, other) in otherAdapters(than: named) { try? await member.startDiscovery(adapter: other, filter: filter) }
        try await named.startDiscovery(adapter: adapter, filter: filter)
    }

    public func stopDiscovery(adapter: ObjectPath) async throws(BlueZError) {
        let named = try radio(for: adapter)
        try await named.stopDiscovery(adapter: adapter)
        for (member, other) in otherAdapters(than: named) { try? await member.stopDiscovery(adapter: other) }
    }

    /// The powered adapters of every radio but `named`.
    private func otherAdapters(than named: any BluetoothCentral) -> [(any BluetoothCentral, ObjectPath)] {
        members.filter { $0 !== named }.flatMap { member in
            member.model.adapters.values.filter(\.powered).map { (member, $0.path) }
        }
    }

    public func removeDevice(_ device: ObjectPath, adapter: ObjectPath) async throws(BlueZError) {
        try await radio(for: adapter).removeDevice(device, adapter: adapter)
    }

    public func connect(_ device: ObjectPath, timeout: Duration) async throws(BlueZError) {
        try await radio(for: device).connect(device, timeout: timeout)
    }

    public func disconnect(_ device: ObjectPath, timeout: Duration) async throws(BlueZError) {
        try await radio(for: device).disconnect(device, timeout: timeout)
    }

    public func pair(_ device: ObjectPath, timeout: Duration) async throws(BlueZError) {
        try await radio(for: device).pair(device, timeout: timeout)
    }

    public func read(_ characteristic: ObjectPath, offset: UInt16, timeout: Duration) async throws(BlueZError) -> [UInt8] {
        try await radio(for: characteristic).read(characteristic, offset: offset, timeout: timeout)
    }

    public func write(_ characteristic: ObjectPath, _ bytes: [UInt8], withResponse: Bool, timeout: Duration) async throws(BlueZError) {
        try await radio(for: characteristic).write(characteristic, bytes, withResponse: withResponse, timeout: timeout)
    }

    public func subscribe(_ characteristic: ObjectPath, method: NotifyMethod,
                          handler: @escaping @Sendable ([UInt8]) -> Void) async throws(BlueZError) -> NotificationSubscription {
        try await radio(for: characteristic).subscribe(characteristic, method: method, handler: handler)
    }

    /// The radio whose adapter `path` is, or lies under.
    func radio(for path: ObjectPath) throws(BlueZError) -> any BluetoothCentral {
        for member in members where member.model.adapters.keys.contains(where: { path == $0 || path.isDescendant(of: $0) }) {
            return member
        }
        throw .notFound("no radio has \(path)")
    }
}
