import BlueZ
import DBus
import Simulator
import SimulatedWearables
import EventLoop
import Synchronization

/// A `BluetoothCentral` that hosts simulated peripherals in the test's own process: no bus, no bluetoothd, no
/// sockets. Its model has the shape BlueZ gives (object paths, UUIDs, flags, the order of signals on connect), so
/// drivers, device sessions and the gateway run on it unchanged, in milliseconds.
///
/// What it leaves out of BlueZ: timing (connecting and GATT requests take no time), pairing agents (`pair` just
/// succeeds), advertisement intervals (a device in range is seen as soon as discovery runs), adapter power changes.
/// Faults a test wants are explicit (`refuseNotifications`, `endNotifications`, `dropLink`, `failConnections`).
/// The simulator process (`wear2mqtt-sim`) remains the reference for BlueZ's D-Bus behaviour.
public final class InMemoryCentral: BluetoothCentral {
    struct Hosted {
        let peripheral: any SimulatedPeripheral
        let address: BluetoothAddress
        let path: ObjectPath
        let layout: GATTLayout
        var rssi: Int
        var inRange: Bool
        var known: Bool
        var paired = false
        var connection: InMemoryConnection?
    }

    struct State {
        var model = BlueZModel()
        var available = true
        var discovering = false
        var hosted: [ObjectPath: Hosted] = [:]
        var refused: [String: BlueZError] = [:]
        var connectionFailures = 0
        var connects: [BluetoothAddress: Int] = [:]
        var writes: [(BluetoothAddress, String, [UInt8])] = []
        var latency: [ObjectPath: Duration] = [:]
        var disconnectLatency: [ObjectPath: Duration] = [:]
        var failNextWrite: [ObjectPath: BlueZError] = [:]
        var radios: [Task<Void, Never>] = []
    }

    let state = Mutex(State())
    let listeners = ModelEventListeners()
    /// The ATT MTU every connection negotiates (BlueZ and phones usually reach 247 or more with wearables).
    public let mtu: Int
    public let adapterAddress: BluetoothAddress
    /// The clock its latencies (`setLatency`, `setDisconnectLatency`) run on.
    public let time: TimeSource
    /// Told of every change a test may wait for: the model's (connections, services, pairing), every write and every
    /// subscription.
    public let changes = ChangeNotifier()

    public init(adapterAddress: BluetoothAddress = BluetoothAddress("00:1A:7D:DA:71:13")!, mtu: Int = 247,
                time: TimeSource = .system) {
        self.adapterAddress = adapterAddress
        self.mtu = mtu
        self.time = time
        apply { model in
            model.interfacesAdded(path: InMemoryObjects.adapterPath,
                                  interfaces: InMemoryObjects.adapter(address: adapterAddress, powered: true, discovering: false))
        }
    }

    deinit {
        for radio in state.withLock({ $0.radios }) { radio.cancel() }
    }

    // MARK: BluetoothCentral

    public var model: BlueZModel { state.withLock { $0.model } }

    public var isServiceAvailable: Bool { state.withLock { $0.available } }
    /// No D-Bus here: the in-memory stack's refusals are typed errors, not named D-Bus ones.
    public var dbusErrorCounts: [String: UInt64] { [:] }

    public func events() -> AsyncStream<BlueZModelEvent> { listeners.stream() }

    public func startDiscovery(adapter: ObjectPath, filter: DiscoveryFilter) async throws(BlueZError) {
        try requireAdapter(adapter)
        state.withLock { $0.discovering = true }
        apply { model in
            model.propertiesChanged(path: InMemoryObjects.adapterPath, interface: BlueZNames.adapter, changed: ["Discovering": true])
        }
        for path in state.withLock({ $0.hosted.filter { $0.value.inRange && !$0.value.known }.map(\.key) }) {
            announce(path)
        }
    }

    public func stopDiscovery(adapter: ObjectPath) async throws(BlueZError) {
        try requireAdapter(adapter)
        state.withLock { $0.discovering = false }
        apply { model in
            model.propertiesChanged(path: InMemoryObjects.adapterPath, interface: BlueZNames.adapter, changed: ["Discovering": false])
        }
    }

    public func removeDevice(_ device: ObjectPath, adapter: ObjectPath) async throws(BlueZError) {
        try requireAdapter(adapter)
        await endConnection(device)
        let known = state.withLock { state -> Bool in
            defer { state.hosted[device]?.known = false; state.hosted[device]?.paired = false }
            return state.hosted[device]?.known ?? false
        }
        guard known else { throw .notFound("no device \(device)") }
        apply { $0.interfacesRemoved(path: device, interfaces: [BlueZNames.device]) }
    }

    public func connect(_ device: ObjectPath, timeout: Duration) async throws(BlueZError) {
        let attempt = state.withLock { state -> Result<Hosted?, BlueZError> in
            guard let hosted = state.hosted[device], hosted.known else { return .failure(.notFound("no device \(device)")) }
            if hosted.connection != nil { return .success(nil) }
            guard hosted.inRange else { return .failure(.timeout("\(hosted.address) is out of range")) }
            if state.connectionFailures > 0 {
                state.connectionFailures -= 1
                return .failure(.failed(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-remote"))
            }
            state.connects[hosted.address, default: 0] += 1
            return .success(hosted)
        }
        guard let hosted = try attempt.get() else { return }
        let connection = InMemoryConnection(central: self, device: device, mtu: mtu)
        state.withLock { $0.hosted[device]?.connection = connection }
        // The peripheral is on the link before BlueZ says ServicesResolved, so a subscription never finds it absent.
        connection.start(hosted.peripheral)
        apply { model in
            var events: [BlueZModelEvent] = []
            for (path, interfaces) in InMemoryObjects.gatt(of: hosted.layout, device: device, mtu: mtu) {
                events += model.interfacesAdded(path: path, interfaces: interfaces)
            }
            events += model.propertiesChanged(path: device, interface: BlueZNames.device,
                                              changed: ["Connected": true, "ServicesResolved": true])
            return events
        }
    }

    public func disconnect(_ device: ObjectPath, timeout: Duration) async throws(BlueZError) {
        guard state.withLock({ $0.hosted[device] != nil }) else { throw .notFound("no device \(device)") }
        if let latency = state.withLock({ $0.disconnectLatency[device] }) { try? await time.sleep(for: latency) }
        await endConnection(device)
    }

    public func pair(_ device: ObjectPath, timeout: Duration) async throws(BlueZError) {
        let found = state.withLock { state -> Bool in
            guard state.hosted[device]?.known == true else { return false }
            state.hosted[device]?.paired = true
            return true
        }
        guard found else { throw .notFound("no device \(device)") }
        apply { $0.propertiesChanged(path: device, interface: BlueZNames.device, changed: ["Paired": true, "Bonded": true]) }
    }

    public func read(_ characteristic: ObjectPath, offset: UInt16, timeout: Duration) async throws(BlueZError) -> [UInt8] {
        let (connection, found) = try target(characteristic, needs: "read")
        await delay(connection.device)
        let value = try await connection.read(found.uuid)
        return offset == 0 ? value : Array(value.dropFirst(Int(offset)))
    }

    public func write(_ characteristic: ObjectPath, _ bytes: [UInt8], withResponse: Bool, timeout: Duration) async throws(BlueZError) {
        let (connection, found) = try target(characteristic, needs: withResponse ? "write" : "write-without-response")
        await delay(connection.device)
        let failure = state.withLock { state -> BlueZError? in
            if let failure = state.failNextWrite.removeValue(forKey: connection.device) { return failure }
            if let address = state.hosted[connection.device]?.address { state.writes.append((address, found.uuid.string, bytes)) }
            return nil
        }
        if let failure { throw failure }
        defer { changes.changed() }
        try await connection.write(found.uuid, bytes, withResponse: withResponse)
    }

    public func subscribe(_ characteristic: ObjectPath, method: NotifyMethod,
                          handler: @escaping @Sendable ([UInt8]) -> Void) async throws(BlueZError) -> NotificationSubscription {
        let (connection, found) = try target(characteristic, needs: nil)
        guard found.flags.contains(.notify) || found.flags.contains(.indicate) else {
            throw .notSupported("\(found.uuid) does not notify")
        }
        if let refusal = state.withLock({ $0.refused[found.uuid.string] }) { throw refusal }
        defer { changes.changed() }
        return await connection.subscribe(found.uuid, handler: handler)
    }

    // MARK: Inside

    /// The answer time a test set for the device (`setLatency`): BlueZ's reply comes that much later.
    private func delay(_ device: ObjectPath) async {
        guard let latency = state.withLock({ $0.latency[device] }) else { return }
        try? await time.sleep(for: latency)
    }

    /// Applies a model change and announces its events, in order, to every listener.
    @discardableResult
    func apply(_ change: (inout BlueZModel) -> [BlueZModelEvent]) -> [BlueZModelEvent] {
        let events = state.withLock { change(&$0.model) }
        listeners.announce(events)
        changes.changed()
        return events
    }

    private func requireAdapter(_ adapter: ObjectPath) throws(BlueZError) {
        guard adapter == InMemoryObjects.adapterPath else { throw .adapterUnavailable("no adapter \(adapter)") }
    }

    /// BlueZ creates a device object the first time it sees the device advertise.
    func announce(_ path: ObjectPath) {
        guard let hosted = state.withLock({ state -> Hosted? in
            guard var hosted = state.hosted[path], !hosted.known else { return nil }
            hosted.known = true
            state.hosted[path] = hosted
            return hosted
        }) else { return }
        apply { model in
            model.interfacesAdded(path: path, interfaces: InMemoryObjects.device(
                address: hosted.address, advertisement: hosted.peripheral.advertisement, rssi: hosted.rssi, paired: hosted.paired))
        }
    }

    /// The connection and the characteristic a GATT request names; `needs` is the BlueZ flag it requires.
    private func target(_ characteristic: ObjectPath, needs flag: String?) throws(BlueZError) -> (InMemoryConnection, GATTLayout.Characteristic) {
        let lookup = state.withLock { state -> Result<(InMemoryConnection, GATTLayout.Characteristic), BlueZError> in
            let device = state.model.device(owning: characteristic)
            guard let hosted = state.hosted[device], let connection = hosted.connection else { return .failure(.notConnected) }
            let relative = String(characteristic.rawValue.dropFirst(device.rawValue.count + 1))
            guard let found = hosted.layout.characteristic(atRelativePath: relative) else {
                return .failure(.notFound("no characteristic \(characteristic)"))
            }
            return .success((connection, found))
        }
        let (connection, found) = try lookup.get()
        if let flag, !found.flags.bluezNames.contains(flag) {
            throw BlueZError(BlueZErrorReply.notPermitted(flag.hasPrefix("read") ? "Read not permitted" : "Write not permitted").busError)
        }
        return (connection, found)
    }

    /// Ends the link to `device`, if any: the peripheral stops, subscriptions end, BlueZ drops the GATT objects and
    /// reports the device disconnected.
    func endConnection(_ device: ObjectPath) async {
        guard let connection = state.withLock({ state -> InMemoryConnection? in
            defer { state.hosted[device]?.connection = nil }
            return state.hosted[device]?.connection
        }) else { return }
        await connection.end()
        apply { model in
            var events = model.propertiesChanged(path: device, interface: BlueZNames.device,
                                                 changed: ["Connected": false, "ServicesResolved": false])
            let below = model.services.keys.filter { $0.isDescendant(of: device) }
                + model.characteristics.keys.filter { $0.isDescendant(of: device) }
            for path in below.sorted(by: >) {
                events += model.interfacesRemoved(path: path, interfaces: [BlueZNames.gattCharacteristic, BlueZNames.gattService])
            }
            return events
        }
    }
}
