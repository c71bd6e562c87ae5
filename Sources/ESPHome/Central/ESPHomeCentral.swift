import BlueZ
import DBus
import EventLoop
import Logging
import Synchronization

/// An ESPHome Bluetooth proxy as a `BluetoothCentral`: the same model BlueZ gives (one adapter object for the proxy,
/// a device object per advertiser, GATT objects while connected) and the same operations, carried over the proxy's
/// native API by a `ProxyClient` on the data-path loop. Drivers cannot tell it from a local adapter.
///
/// What differs from BlueZ is said where it happens: connecting needs a free slot on the proxy (`connectionLimit`
/// otherwise), the proxy caches services when it can (connect "with cache"), notifications are enabled by writing the
/// CCCD as the API requires, and when the proxy goes away every device on it is disconnected at once.
public final class ESPHomeCentral: BluetoothCentral {
    struct State {
        var model = BlueZModel()
        var identity: APIClientStateMachine.ProxyIdentity?
        var discovering = false
        var waiters = ProxyWaiters()
        /// Services arriving for a connect, by device address.
        var listing: [UInt64: [BluetoothGATTService]] = [:]
        /// Each connected device's GATT objects and handles.
        var gatt: [UInt64: ProxyGATTObjects] = [:]
        /// Each device's services as last listed: a proxy with remote caching then connects "with cache", skipping
        /// service discovery on the air (the client keeps the cache, as ESPHome's API expects).
        var serviceCache: [UInt64: [BluetoothGATTService]] = [:]
        /// Counts each device's connections, so work left from an earlier link (a subscription's cleanup) never
        /// reaches a later one.
        var links: [UInt64: Int] = [:]
        /// Notification handlers by device and value handle, with their subscriptions.
        var subscriptions: [UInt64: [UInt32: (handler: @Sendable ([UInt8]) -> Void, subscription: NotificationSubscription)]] = [:]
        var slots: (free: Int, limit: Int) = (0, 0)
        /// Every advertiser heard lately, with or without a device object (a proxy listens all the time): what radio
        /// choice compares. Bounded; the oldest goes first.
        var sightings: [UInt64: (rssi: Int, at: ContinuousClock.Instant)] = [:]
        /// Advertisements received since the start: the radio watchdog compares two looks.
        var advertisementsHeard: UInt64 = 0
    }

    /// The weight of each advertisement's RSSI in a sighting's level (exponential smoothing).
    static let rssiSmoothing = 0.3
    /// At most this many advertisers remembered per proxy.
    static let sightingsLimit = 1024
    /// At most this many unconnected device objects per proxy.
    static let devicesLimit = 512

    public let name: String
    public let adapterPath: ObjectPath
    private let client: ProxyClient
    private let state = Mutex(State())
    private let listeners = ModelEventListeners()
    private let forward: EventForward
    let logger: Logger

    public init(_ settings: ProxyClient.Settings, loop: EventLoop, logger: Logger = Logger(label: "esphome")) {
        self.logger = logger
        name = settings.name
        adapterPath = ObjectPath("/org/esphome/" + String(settings.name.map { $0.isLetter || $0.isNumber ? $0 : "_" }))
        let forward = EventForward()
        self.forward = forward
        client = ProxyClient(settings, loop: loop) { forward.deliver($0) }
        forward.target = self
        apply { model in
            model.interfacesAdded(path: adapterPath, interfaces: [BlueZNames.adapter: [
                "Address": "00:00:00:00:00:00", "Name": .string(settings.name), "Alias": .string(settings.name),
                "Powered": false, "Discovering": false,
            ]])
        }
    }

    public func start() { client.start() }
    public func stop() { client.stop() }

    /// The proxy's identity while connected.
    public var identity: APIClientStateMachine.ProxyIdentity? { state.withLock { $0.identity } }
    /// Free and total connection slots, as the proxy last said.
    public var slots: (free: Int, limit: Int) { state.withLock { $0.slots } }

    /// Advertisements received since the start (every one, with or without a device object).
    public var advertisementsHeard: UInt64 { state.withLock { $0.advertisementsHeard } }

    /// Drops the connection and connects again at once (the radio watchdog's reset).
    public func reconnect(reason: String) { client.reconnect(reason: reason) }

    /// Asks for the advertisements again on the same connection (the watchdog's first step for a quiet proxy).
    public func resubscribeAdvertisements() {
        guard isServiceAvailable else { return }
        subscribeAdvertisements()
    }

    /// The signal level heard from `address` (smoothed over its advertisements) and how long ago the last one came;
    /// nil if not heard since the proxy connected.
    public func lastHeard(_ address: BluetoothAddress) -> (rssi: Int, age: Duration)? {
        let key = ProxyAddress.uint64(address)
        guard let sighting = state.withLock({ $0.sightings[key] }) else { return nil }
        return (sighting.rssi, .now - sighting.at)
    }

    // MARK: BluetoothCentral

    public var model: BlueZModel { state.withLock { $0.model } }
    public var isServiceAvailable: Bool { state.withLock { $0.identity != nil } }
    public var dbusErrorCounts: [String: UInt64] { [:] }

    public func events() -> AsyncStream<BlueZModelEvent> { listeners.stream() }

    /// The proxy's advertisements are subscribed to for as long as the connection lasts (a proxy answers only the
    /// client subscribed to them, and drops its links when that client unsubscribes), and every advertiser gets an
    /// object: discovery only says so in the adapter's `Discovering`, as scans expect.
    public func startDiscovery(adapter: ObjectPath, filter: DiscoveryFilter) async throws(BlueZError) {
        try requireReady(adapter)
        state.withLock { $0.discovering = true }
        apply { $0.propertiesChanged(path: adapterPath, interface: BlueZNames.adapter, changed: ["Discovering": true]) }
    }

    public func stopDiscovery(adapter: ObjectPath) async throws(BlueZError) {
        try requireReady(adapter)
        state.withLock { $0.discovering = false }
        apply { $0.propertiesChanged(path: adapterPath, interface: BlueZNames.adapter, changed: ["Discovering": false]) }
    }

    public func removeDevice(_ device: ObjectPath, adapter: ObjectPath) async throws(BlueZError) {
        guard adapter == adapterPath, let info = model.devices[device] else { throw .notFound("no device \(device)") }
        if info.connected { try? await disconnect(device, timeout: .seconds(5)) }
        apply { $0.interfacesRemoved(path: device, interfaces: [BlueZNames.device]) }
    }

    public func connect(_ device: ObjectPath, timeout: Duration) async throws(BlueZError) {
        let address = try address(of: device)
        if model.devices[device]?.connected == true { return }
        let features = state.withLock { $0.identity?.features } ?? []
        guard state.withLock({ $0.identity != nil }) else { throw .adapterUnavailable("the proxy \(name) is not connected") }
        let deadline = ContinuousClock.now + timeout
        try await waitForFreeSlot(address, until: deadline)
        let cached = features.contains(.remoteCaching) ? state.withLock({ $0.serviceCache[address] }) : nil
        var request = BluetoothDeviceRequest()
        request.address = address
        request.requestType = cached != nil ? .connectV3WithCache : .connectV3WithoutCache
        request.hasAddressType_p = true
        request.addressType = model.devices[device]?.addressType == "random" ? 1 : 0
        var answer: ProxyWaiters.Answer
        while true {
            do throws(BlueZError) {
                answer = try await ask(.connect(address), timeout: deadline - .now, APIMessage(.bluetoothDeviceRequest, request))
                break
            } catch .connectionLimit {
                // Refused for want of a slot our count thought free: wait for the proxy's next report, then try again.
                state.withLock { if $0.slots.limit > 0 { $0.slots.free = 0 } }
                try await waitForFreeSlot(address, until: deadline)
            }
        }
        guard case .connected(let mtu) = answer else {
            throw .failed(name: BlueZErrorName.failed, message: "unexpected answer to connect")
        }
        let services: [BluetoothGATTService]
        if let cached {
            services = cached
        } else {
            var listing = BluetoothGATTGetServicesRequest()
            listing.address = address
            guard case .services(let listed) = try await ask(.services(address), timeout: timeout,
                                                             APIMessage(.bluetoothGATTGetServicesRequest, listing)) else {
                throw .failed(name: BlueZErrorName.failed, message: "unexpected answer to the service listing")
            }
            services = listed
        }
        let objects = ProxyGATTObjects(services: services, device: device, mtu: mtu)
        state.withLock { state in
            state.gatt[address] = objects
            state.links[address, default: 0] += 1
            if !services.isEmpty { state.serviceCache[address] = services }
        }
        apply { model in
            var events: [BlueZModelEvent] = []
            for (path, interfaces) in objects.objects { events += model.interfacesAdded(path: path, interfaces: interfaces) }
            return events + model.propertiesChanged(path: device, interface: BlueZNames.device, changed: ["Connected": true, "ServicesResolved": true])
        }
    }

    public func disconnect(_ device: ObjectPath, timeout: Duration) async throws(BlueZError) {
        let address = try address(of: device)
        guard model.devices[device]?.connected == true else { return }
        var request = BluetoothDeviceRequest()
        request.address = address
        request.requestType = .disconnect
        _ = try? await ask(.disconnect(address), timeout: timeout, APIMessage(.bluetoothDeviceRequest, request))
        linkLost(address)
    }

    public func pair(_ device: ObjectPath, timeout: Duration) async throws(BlueZError) {
        let address = try address(of: device)
        var request = BluetoothDeviceRequest()
        request.address = address
        request.requestType = .pair
        _ = try await ask(.pair(address), timeout: timeout, APIMessage(.bluetoothDeviceRequest, request))
        apply { $0.propertiesChanged(path: device, interface: BlueZNames.device, changed: ["Paired": true, "Bonded": true]) }
    }

    public func read(_ characteristic: ObjectPath, offset: UInt16, timeout: Duration) async throws(BlueZError) -> [UInt8] {
        let (address, found) = try target(characteristic)
        var request = BluetoothGATTReadRequest()
        request.address = address
        request.handle = found.handle
        guard case .bytes(let value) = try await ask(.read(address, found.handle), timeout: timeout,
                                                     APIMessage(.bluetoothGATTReadRequest, request)) else { return [] }
        return Array(value.dropFirst(Int(offset)))
    }

    public func write(_ characteristic: ObjectPath, _ bytes: [UInt8], withResponse: Bool, timeout: Duration) async throws(BlueZError) {
        let (address, found) = try target(characteristic)
        var request = BluetoothGATTWriteRequest()
        request.address = address
        request.handle = found.handle
        request.response = withResponse
        request.data = .init(bytes)
        let message = APIMessage(.bluetoothGATTWriteRequest, request)
        guard withResponse else { return client.send(message) }
        _ = try await ask(.write(address, found.handle), timeout: timeout, message)
    }

    public func subscribe(_ characteristic: ObjectPath, method: NotifyMethod,
                          handler: @escaping @Sendable ([UInt8]) -> Void) async throws(BlueZError) -> NotificationSubscription {
        let (address, found) = try target(characteristic)
        guard found.properties & 0x30 != 0 else { throw .notSupported("\(found.uuid) does not notify") }
        try await setNotifications(address, found, enabled: true)
        let link = state.withLock { $0.links[address] }
        let subscription = NotificationSubscription { [weak self] in
            guard let self else { return }
            _ = state.withLock { $0.subscriptions[address]?.removeValue(forKey: found.handle) }
            Task {
                // Only on the link it was made on: after a disconnect there is nothing to turn off.
                guard self.state.withLock({ $0.links[address] == link && $0.gatt[address] != nil }) else { return }
                try? await self.setNotifications(address, found, enabled: false)
            }
        }
        state.withLock { $0.subscriptions[address, default: [:]][found.handle] = (handler, subscription) }
        return subscription
    }

    // MARK: Inside

    /// The proxy turns notifications on (NotifyRequest) and the client writes the CCCD itself, as ESPHome's v3
    /// connections require: notify (1) or indicate (2), or off (0).
    private func setNotifications(_ address: UInt64, _ found: ProxyGATTObjects.Characteristic, enabled: Bool) async throws(BlueZError) {
        var notify = BluetoothGATTNotifyRequest()
        notify.address = address
        notify.handle = found.handle
        notify.enable = enabled
        _ = try await ask(.notify(address, found.handle), timeout: .seconds(10), APIMessage(.bluetoothGATTNotifyRequest, notify))
        guard let cccd = found.clientConfigurationHandle else { return }
        var write = BluetoothGATTWriteDescriptorRequest()
        write.address = address
        write.handle = cccd
        write.data = .init(enabled ? (found.properties & 0x10 != 0 ? [1, 0] : [2, 0]) : [0, 0])
        _ = try await ask(.write(address, cccd), timeout: .seconds(10), APIMessage(.bluetoothGATTWriteDescriptorRequest, write))
    }

    /// Returns once the proxy reports a free slot, within `timeout`: a slot another device just gave back counts only
    /// from the proxy's next report, and a connect refused in that moment would fail a visit for nothing.
    private func waitForFreeSlot(_ address: UInt64, until deadline: ContinuousClock.Instant) async throws(BlueZError) {
        while state.withLock({ $0.slots.limit > 0 && $0.slots.free == 0 }) {
            let left = deadline - .now
            do throws(BlueZError) {
                guard left > .zero else { throw .timeout("") }
                // Registered under the same lock the count is read under, so a report in between is not missed.
                _ = try await ask(.freeSlot(address), timeout: left, nil) { $0.slots.limit == 0 || $0.slots.free > 0 }
            } catch .timeout {
                throw .connectionLimit("the proxy \(name) has no free connection slot")
            }
        }
    }

    /// Sends `message` (none: only waits) and waits for the answer `key` names, at most `timeout`; answers `.done` at
    /// once when `alreadyAnswered` holds of the state when the waiter would be added.
    private func ask(_ key: ProxyWaiters.Key, timeout: Duration, _ message: APIMessage?,
                     alreadyAnswered: (@Sendable (State) -> Bool)? = nil) async throws(BlueZError) -> ProxyWaiters.Answer {
        // The timeout's task, cancelled once the answer came, so no request leaves a task asleep behind it.
        let timer = Mutex<Task<Void, Never>?>(nil)
        let answer = await withCheckedContinuation { (continuation: CheckedContinuation<ProxyWaiters.Answer, Never>) in
            enum Added { case added, answered, refused }
            let added = state.withLock { state -> Added in
                if alreadyAnswered?(state) == true { return .answered }
                return state.waiters.add(key, continuation) ? .added : .refused
            }
            switch added {
            case .added: break
            case .answered: return continuation.resume(returning: .done)
            case .refused: return continuation.resume(returning: .failure(.inProgress("a request of the same kind is waiting")))
            }
            if let message { client.send(message) }
            timer.withLock {
                $0 = Task { [weak self] in
                    guard (try? await Task.sleep(for: timeout)) != nil, let self else { return }
                    state.withLock { $0.waiters.take(key) }?.resume(returning: .failure(.timeout("the proxy \(name) did not answer")))
                }
            }
        }
        timer.withLock { $0?.cancel() }
        if case .failure(let error) = answer { throw error }
        return answer
    }

    private func requireReady(_ adapter: ObjectPath) throws(BlueZError) {
        guard adapter == adapterPath else { throw .adapterUnavailable("no adapter \(adapter)") }
        guard state.withLock({ $0.identity != nil }) else { throw .adapterUnavailable("the proxy \(name) is not connected") }
    }

    private func address(of device: ObjectPath) throws(BlueZError) -> UInt64 {
        guard let address = model.devices[device]?.address else { throw .notFound("no device \(device)") }
        return ProxyAddress.uint64(address)
    }

    private func target(_ characteristic: ObjectPath) throws(BlueZError) -> (UInt64, ProxyGATTObjects.Characteristic) {
        let device = model.device(owning: characteristic)
        let address = try address(of: device)
        guard let found = state.withLock({ $0.gatt[address]?.characteristics[characteristic] }) else {
            throw state.withLock({ $0.gatt[address] == nil }) ? .notConnected : .notFound("no characteristic \(characteristic)")
        }
        return (address, found)
    }

    func devicePath(_ address: BluetoothAddress) -> ObjectPath {
        ObjectPath(adapterPath.rawValue + "/dev_" + address.rawValue.replacing(":", with: "_"))
    }

    /// Applies a model change and announces its events, in order, to every listener.
    @discardableResult
    func apply(_ change: (inout BlueZModel) -> [BlueZModelEvent]) -> [BlueZModelEvent] {
        let events = state.withLock { change(&$0.model) }
        listeners.announce(events)
        return events
    }

    /// `address`'s link is gone: its waiters fail, its subscriptions end, its GATT objects go, it shows disconnected.
    /// Every waiter of the device is taken in the same step as its link's state, before any is resumed: a caller
    /// resumed here (a `disconnect`, a failed `connect`) may ask again at once, and its new request must not be
    /// taken for the old link's.
    func linkLost(_ address: UInt64, connectFailure: BlueZError = .notConnected) {
        let (connecting, disconnecting, waiters, subscriptions) = state.withLock { state in
            state.gatt[address] = nil
            state.listing[address] = nil
            // Only an advertisement after the link ended says the device is still here: one that walked out of range
            // must not look heard for the sighting's freshness and draw its reconnect back to this proxy.
            state.sightings[address] = nil
            return (state.waiters.take(.connect(address)), state.waiters.take(.disconnect(address)),
                    state.waiters.takeAll(address: address), state.subscriptions.removeValue(forKey: address) ?? [:])
        }
        connecting?.resume(returning: .failure(connectFailure))
        disconnecting?.resume(returning: .done)
        for waiter in waiters { waiter.resume(returning: .failure(.notConnected)) }
        for (_, entry) in subscriptions { entry.subscription.finish() }
        guard let bluetooth = ProxyAddress.address(address) else { return }
        let device = devicePath(bluetooth)
        apply { model in
            guard model.devices[device]?.connected == true || model.devices[device]?.servicesResolved == true else { return [] }
            var events = model.propertiesChanged(path: device, interface: BlueZNames.device, changed: ["Connected": false, "ServicesResolved": false])
            let below = model.descriptors.keys.filter { $0.isDescendant(of: device) } + model.characteristics.keys.filter { $0.isDescendant(of: device) }
                + model.services.keys.filter { $0.isDescendant(of: device) }
            for path in below.sorted(by: >) {
                events += model.interfacesRemoved(path: path, interfaces: [BlueZNames.gattDescriptor, BlueZNames.gattCharacteristic,
                                                                           BlueZNames.gattService])
            }
            return events
        }
    }

    /// Waiter and subscription bookkeeping for one answer (called on the loop thread through `EventForward`).
    func resume(_ key: ProxyWaiters.Key, _ answer: ProxyWaiters.Answer) {
        state.withLock { $0.waiters.take(key) }?.resume(returning: answer)
    }

    func takeWaiters(address: UInt64, handle: UInt32) -> [CheckedContinuation<ProxyWaiters.Answer, Never>] {
        state.withLock { $0.waiters.take(address: address, handle: handle) }
    }

    func withState<T: Sendable>(_ body: (inout State) -> sending T) -> T { state.withLock { body(&$0) } }

    func clientSend(_ message: APIMessage) { client.send(message) }
}

/// Hands the client's events to the central, which does not exist yet when the client is made.
final class EventForward: Sendable {
    private struct Weak { weak var central: ESPHomeCentral? }
    private let central = Mutex(Weak())
    var target: ESPHomeCentral? {
        get { central.withLock { $0.central } }
        set { central.withLock { $0.central = newValue } }
    }

    func deliver(_ event: ProxyClient.Event) { target?.handle(event) }
}
