import DBus
import EventLoop
import Logging
import Synchronization

/// Which adapter to use. hciN numbering changes across reboots, so configuration should name the address.
public enum AdapterSelector: Sendable, Equatable, CustomStringConvertible {
    case address(BluetoothAddress)
    /// `hci0`, or the adapter's name or alias.
    case name(String)

    /// Parses a configuration value: an address, else a name.
    public init(_ text: String) {
        if let address = BluetoothAddress(text) { self = .address(address) } else { self = .name(text) }
    }

    public var description: String {
        switch self {
        case .address(let address): address.rawValue
        case .name(let name): name
        }
    }
}

/// The client side of BlueZ: a live model of adapters, devices and GATT objects, and the operations the
/// gateway needs on them.
///
/// `start()` subscribes to every signal from `org.bluez` (one ordered stream, so an InterfacesAdded is never
/// overtaken by a PropertiesChanged for the same object) before loading GetManagedObjects, and watches
/// NameOwnerChanged: when bluetoothd restarts, the model is rebuilt and `.reset` is announced, so device
/// sessions reconnect and resubscribe.
public final class BlueZClient: BluetoothCentral {
    public let connection: BusConnection
    let logger: Logger
    let state = Mutex(State())
    /// Nil when no event loop could be made (out of descriptors): then every subscription uses StartNotify.
    let notifyReader: NotifyDescriptorReader?
    private let nextID = Atomic<UInt64>(1)

    struct State {
        var model = BlueZModel()
        var available = false
        var listeners: [UInt64: AsyncStream<BlueZModelEvent>.Continuation] = [:]
        /// StartNotify values by characteristic: handlers called as each PropertiesChanged is dispatched.
        var valueRoutes: [ObjectPath: [UInt64: @Sendable ([UInt8]) -> Void]] = [:]
        var started = false
        /// Characteristics whose AcquireNotify refusal was logged: a peripheral refuses on every reconnect, and
        /// once is enough to know.
        var acquireRefusalsLogged: Set<ObjectPath> = []
        /// Failed calls to BlueZ by D-Bus error name (`dbus_errors`), for the metrics.
        var errorCounts = DBusErrorCounts()
    }

    /// `loop`: the event loop that reads AcquireNotify sockets and runs the handlers of `subscribe` (the daemon's
    /// data-path loop, which also publishes to the broker); nil gives the client a loop of its own.
    public init(connection: BusConnection, logger: Logger = Logger(label: "bluez"), loop: EventLoop? = nil) {
        self.connection = connection
        self.logger = logger
        do {
            notifyReader = try NotifyDescriptorReader(loop: loop)
        } catch {
            logger.warning("no event loop for notification sockets; every subscription uses StartNotify",
                           metadata: ["error": "\(error)"])
            notifyReader = nil
        }
    }

    /// A snapshot of the model.
    public var model: BlueZModel { state.withLock { $0.model } }

    /// Whether `org.bluez` is on the bus now.
    public var isServiceAvailable: Bool { state.withLock { $0.available } }

    /// Subscribes to BlueZ's signals and loads the object tree. Succeeds while bluetoothd is not running
    /// (the model stays empty until it appears).
    public func start() async throws(BlueZError) {
        let first = state.withLock { state in defer { state.started = true }; return !state.started }
        guard first else { return }
        let signals: AsyncStream<BusSignal>
        let owners: AsyncStream<BusSignal>
        do {
            // A characteristic's new Value (a StartNotify notification) goes to its handlers on the connection's
            // loop as it is dispatched; everything else reaches the model through the ordered consumer below.
            signals = try await connection.signals(MatchRule(sender: BlueZNames.service),
                                                   addingAtBus: signalRulesOnMainSocket()) { [weak self] signal in
                self?.routeValue(signal) ?? false
            }
            owners = try await connection.signals(MatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                                                            member: "NameOwnerChanged", arg0: BlueZNames.service))
        } catch {
            throw BlueZError(error)
        }
        await reload()
        // One consumer for both streams, so a reload never runs beside signal processing: a snapshot applied
        // after newer signals would wipe what they added. Signals older than a snapshot are applied again in
        // order after it, which converges on the snapshot's state.
        enum Input: Sendable { case signal(BusSignal), owner(String) }
        let (inputs, feed) = AsyncStream.makeStream(of: Input.self)
        // Unstructured (these three): merge BlueZ's signals and its name owner into one ordered stream for the client's life.
        Task {
            for await signal in signals { feed.yield(.signal(signal)) }
            feed.finish()
        }
        Task {
            for await change in owners {
                feed.yield(.owner(change.body.count > 2 ? change.body[2].stringValue ?? "" : ""))
            }
        }
        Task { [self] in
            for await input in inputs {
                switch input {
                case .signal(let signal):
                    apply(signal)
                case .owner(let newOwner) where newOwner.isEmpty:
                    logger.warning("bluetoothd left the bus")
                    publish(state.withLock { state in
                        state.available = false
                        state.model = BlueZModel()
                        return [.reset]
                    })
                case .owner(let newOwner):
                    logger.info("bluetoothd is on the bus; reloading its objects", metadata: ["owner": "\(newOwner)"])
                    await reload()
                }
            }
        }
    }

    /// The model's signals from BlueZ, as rules for the main socket: all of them, or — when the connection could open
    /// its signal socket for the characteristics' property changes (StartNotify values, thousands a second, read
    /// there without libdbus; `BusConnection.receiveOnSignalSocket`) — the rest. The rest is what the model reads:
    /// objects added and removed, and the properties of adapters, devices, services and descriptors.
    private func signalRulesOnMainSocket() -> [MatchRule] {
        let characteristicChanges = MatchRule(sender: BlueZNames.service, interface: BlueZNames.properties,
                                              member: "PropertiesChanged", arg0: BlueZNames.gattCharacteristic)
        do {
            try connection.receiveOnSignalSocket([characteristicChanges])
        } catch {
            logger.info("StartNotify values come through libdbus", metadata: ["reason": "\(error)"])
            return [MatchRule(sender: BlueZNames.service)]
        }
        return [MatchRule(sender: BlueZNames.service, interface: BlueZNames.objectManager)]
            + [BlueZNames.adapter, BlueZNames.device, BlueZNames.gattService, BlueZNames.gattDescriptor].map { interface in
                MatchRule(sender: BlueZNames.service, interface: BlueZNames.properties, member: "PropertiesChanged", arg0: interface)
            }
    }

    /// Loads GetManagedObjects into a fresh model.
    private func reload() async {
        do {
            let reply = try await connection.call(destination: BlueZNames.service, path: BlueZNames.root,
                                                  interface: BlueZNames.objectManager, member: "GetManagedObjects",
                                                  timeout: .seconds(10))
            let objects = reply.first ?? .stringVariantDictionary([:])
            publish(state.withLock { state in
                state.available = true
                return state.model.reset(managedObjects: objects)
            })
        } catch {
            logger.info("BlueZ is not available", metadata: ["reason": "\(error)"])
            publish(state.withLock { state in
                state.available = false
                state.model = BlueZModel()
                return [.reset]
            })
        }
    }

    private func apply(_ signal: BusSignal) {
        guard let path = signal.path else { return }
        let events: [BlueZModelEvent] = state.withLock { state in
            switch (signal.interface, signal.member) {
            case (BlueZNames.objectManager, "InterfacesAdded"):
                guard signal.body.count == 2, let added = signal.body[0].objectPathValue else { return [] }
                return state.model.interfacesAdded(path: added, interfaces: BlueZModel.interfaces(signal.body[1]))
            case (BlueZNames.objectManager, "InterfacesRemoved"):
                guard signal.body.count == 2, let removed = signal.body[0].objectPathValue else { return [] }
                return state.model.interfacesRemoved(path: removed, interfaces: signal.body[1].stringArrayValue ?? [])
            case (BlueZNames.properties, "PropertiesChanged"):
                guard signal.body.count >= 2, let interface = signal.body[0].stringValue else { return [] }
                return state.model.propertiesChanged(path: path, interface: interface,
                                                     changed: signal.body[1].stringKeyedDictionary ?? [:],
                                                     invalidated: signal.body.count > 2 ? signal.body[2].stringArrayValue ?? [] : [])
            default:
                return []
            }
        }
        publish(events)
    }

    private func publish(_ events: [BlueZModelEvent]) {
        guard !events.isEmpty else { return }
        for event in events {
            if case .characteristicValue(let path, let value) = event {
                for route in state.withLock({ Array(($0.valueRoutes[path] ?? [:]).values) }) { route(value) }
                continue
            }
            for listener in state.withLock({ Array($0.listeners.values) }) { listener.yield(event) }
        }
    }

    /// Model changes from now on (characteristic values excepted: those go to `notifications`).
    public func events() -> AsyncStream<BlueZModelEvent> {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let (stream, continuation) = AsyncStream.makeStream(of: BlueZModelEvent.self)
        state.withLock { $0.listeners[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.listeners.removeValue(forKey: id) }
        }
        return stream
    }

    /// A PropertiesChanged that only carries a characteristic's `Value`: handed to that characteristic's handlers
    /// now (it changes nothing in the model). Answers whether it was one.
    private func routeValue(_ signal: BusSignal) -> Bool {
        guard signal.member == "PropertiesChanged", signal.interface == BlueZNames.properties, let path = signal.path,
              signal.body.count >= 2, signal.body[0].stringValue == BlueZNames.gattCharacteristic,
              let changed = signal.body[1].stringKeyedDictionary, changed.count == 1,
              let value = changed["Value"]?.bytesValue else { return false }
        guard let routes = state.withLock({ $0.valueRoutes[path] }) else { return true }
        for route in routes.values { route(value) }
        return true
    }

    /// Calls `handler` with every `Value` change of `path` (notifications delivered through StartNotify) until the
    /// answered closure is called.
    func onValueChange(of path: ObjectPath, _ handler: @escaping @Sendable ([UInt8]) -> Void) -> @Sendable () -> Void {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        state.withLock { $0.valueRoutes[path, default: [:]][id] = handler }
        return { [weak self] in
            self?.state.withLock { state in
                state.valueRoutes[path]?[id] = nil
                if state.valueRoutes[path]?.isEmpty == true { state.valueRoutes[path] = nil }
            }
        }
    }

    // MARK: Calls

    func call(_ path: ObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue] = [],
              timeout: Duration = .seconds(25)) async throws(BlueZError) -> [DBusValue] {
        do {
            return try await connection.call(destination: BlueZNames.service, path: path, interface: interface,
                                             member: member, arguments: arguments, timeout: timeout)
        } catch {
            state.withLock { $0.errorCounts.count(error) }
            throw BlueZError(error)
        }
    }

    public var dbusErrorCounts: [String: UInt64] { state.withLock { $0.errorCounts.counts } }
}

/// Retries an operation that failed with a retryable BlueZ error (InProgress, no free connection slot,
/// a timeout, bluetoothd away), with exponential backoff. Other errors are thrown at once.
public func retryingBlueZ<T: Sendable>(attempts: Int = 5, initialDelay: Duration = .milliseconds(250),
                                       _ operation: () async throws(BlueZError) -> T) async throws(BlueZError) -> T {
    var delay = initialDelay
    var attempt = 1
    while true {
        do {
            return try await operation()
        } catch where error.isRetryable && attempt < attempts {
            try? await Task.sleep(for: delay)
            delay = delay * 2
            attempt += 1
        }
    }
}
