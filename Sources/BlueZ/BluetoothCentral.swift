import DBus

/// What the gateway and its drivers need of the Bluetooth stack: a live model of adapters, devices and GATT objects
/// (BlueZ's object tree, `BlueZModel`), and the operations on them.
///
/// `BlueZClient` is the production one (libdbus-1 to bluetoothd); `InMemoryCentral` in `Wear2MQTTTesting` hosts
/// simulated peripherals directly, so drivers, sessions and the gateway are tested in milliseconds without a bus.
/// Both keep the same model shape (object paths, lower-case 128-bit UUIDs, BlueZ's flags), so code above this
/// protocol cannot tell them apart. It does not cover what only the real stack has (the pairing agent's D-Bus object,
/// adapter power): those stay on `BlueZClient`.
public protocol BluetoothCentral: AnyObject, Sendable {
    /// A snapshot of the model.
    var model: BlueZModel { get }
    /// Whether the stack is there at all (bluetoothd on the bus).
    var isServiceAvailable: Bool { get }
    /// Model changes from now on (characteristic values excepted: those go to subscriptions).
    func events() -> AsyncStream<BlueZModelEvent>
    /// Failed calls to the stack by D-Bus error name, since the start (bounded: see `DBusErrorCounts`).
    var dbusErrorCounts: [String: UInt64] { get }

    func startDiscovery(adapter: ObjectPath, filter: DiscoveryFilter) async throws(BlueZError)
    func stopDiscovery(adapter: ObjectPath) async throws(BlueZError)
    /// Forgets a device (and its bond).
    func removeDevice(_ device: ObjectPath, adapter: ObjectPath) async throws(BlueZError)

    /// Connects and returns once the device's services are resolved and its GATT objects are in the model.
    func connect(_ device: ObjectPath, timeout: Duration) async throws(BlueZError)
    func disconnect(_ device: ObjectPath, timeout: Duration) async throws(BlueZError)
    /// Pairs through whatever agent the stack has.
    func pair(_ device: ObjectPath, timeout: Duration) async throws(BlueZError)

    func read(_ characteristic: ObjectPath, offset: UInt16, timeout: Duration) async throws(BlueZError) -> [UInt8]
    /// Writes with response ("request") or without ("command").
    func write(_ characteristic: ObjectPath, _ bytes: [UInt8], withResponse: Bool, timeout: Duration) async throws(BlueZError)
    /// Hands every notification (or indication) of `characteristic` to `handler` until the link drops or the
    /// subscription is cancelled; the subscription then ends. Values arrive in order, one call at a time.
    func subscribe(_ characteristic: ObjectPath, method: NotifyMethod,
                   handler: @escaping @Sendable ([UInt8]) -> Void) async throws(BlueZError) -> NotificationSubscription
}

extension BluetoothCentral {
    /// Waits until `condition` holds for the model, or `timeout` passes (false then): checked on every model event,
    /// never polled.
    public func wait(timeout: Duration, until condition: @escaping @Sendable (BlueZModel) -> Bool) async -> Bool {
        let updates = events()
        if condition(model) { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in updates where condition(self.model) { return true }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return condition(self.model)
            }
            let result = await group.next() ?? false
            group.cancelAll()
            return result
        }
    }

    /// The adapter `selector` names, or (nil) the first powered one, else the first.
    public func adapter(_ selector: AdapterSelector? = nil) throws(BlueZError) -> AdapterInfo {
        let adapters = model.adapters.values.sorted { $0.path < $1.path }
        let match: AdapterInfo?
        switch selector {
        case .address(let address)?: match = adapters.first { $0.address == address }
        case .name(let name)?: match = adapters.first { $0.id == name || $0.name == name || $0.alias == name }
        case nil: match = adapters.first { $0.powered } ?? adapters.first
        }
        guard let match else {
            throw .adapterUnavailable(selector.map { "no adapter \($0)" } ?? "no Bluetooth adapter")
        }
        return match
    }

    /// Returns when `device` is no longer connected (or has gone from the model), or the task is cancelled.
    public func waitForDisconnection(_ device: ObjectPath) async {
        while !Task.isCancelled {
            if await wait(timeout: .seconds(3600), until: { !($0.devices[device]?.connected ?? false) }) { return }
        }
    }

    public func startDiscovery(adapter: ObjectPath) async throws(BlueZError) {
        try await startDiscovery(adapter: adapter, filter: DiscoveryFilter())
    }

    public func connect(_ device: ObjectPath) async throws(BlueZError) {
        try await connect(device, timeout: .seconds(15))
    }

    public func disconnect(_ device: ObjectPath) async throws(BlueZError) {
        try await disconnect(device, timeout: .seconds(10))
    }

    public func pair(_ device: ObjectPath) async throws(BlueZError) {
        try await pair(device, timeout: .seconds(60))
    }

    public func read(_ characteristic: ObjectPath) async throws(BlueZError) -> [UInt8] {
        try await read(characteristic, offset: 0, timeout: .seconds(10))
    }

    public func write(_ characteristic: ObjectPath, _ bytes: [UInt8], withResponse: Bool = true) async throws(BlueZError) {
        try await write(characteristic, bytes, withResponse: withResponse, timeout: .seconds(10))
    }
}
