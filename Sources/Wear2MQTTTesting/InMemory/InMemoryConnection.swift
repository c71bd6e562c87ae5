import BlueZ
import DBus
import Simulator
import SimulatedWearables
import Synchronization

/// One link between the in-memory central and a simulated peripheral: the peripheral's `PeripheralLink`, and the
/// central's way to its reads, writes and notifications. A notification goes straight from the peripheral's task to
/// the subscriber's handler, cut to `mtu - 3` bytes as the ATT layer would.
final class InMemoryConnection: PeripheralLink {
    private struct Subscriber {
        let id: UInt64
        let handler: @Sendable ([UInt8]) -> Void
        let subscription: NotificationSubscription
    }

    private struct State {
        var peripheral: (any SimulatedPeripheral)?
        var run: Task<Void, Never>?
        var subscribers: [BluetoothUUID: Subscriber] = [:]
        var nextID: UInt64 = 0
        var ended = false
    }

    let device: ObjectPath
    let mtu: Int
    /// Cleared when the link ends, so a central and its connections do not keep each other alive.
    private let central: Mutex<InMemoryCentral?>
    private let state = Mutex(State())

    init(central: InMemoryCentral, device: ObjectPath, mtu: Int) {
        self.central = Mutex(central)
        self.device = device
        self.mtu = mtu
    }

    /// The peripheral while the link is up: a request still under way when the link ended (one a test slowed with
    /// `setLatency`) never reaches the device, as on the air — the device may be on another central's link by then.
    var peripheral: (any SimulatedPeripheral)? { state.withLock { $0.ended ? nil : $0.peripheral } }

    /// The peripheral's behaviour runs for as long as the link is up.
    func start(_ peripheral: any SimulatedPeripheral) {
        state.withLock { state in
            state.peripheral = peripheral
            state.run = Task { await peripheral.run(on: self) }
        }
    }

    /// The link is gone: the behaviour is cancelled, every subscription ends.
    func end() async {
        let (run, subscribers, peripheral) = state.withLock { state in
            defer {
                state.ended = true
                state.run = nil
                state.subscribers = [:]
            }
            return (state.run, state.subscribers, state.peripheral)
        }
        run?.cancel()
        central.withLock { $0 = nil }
        for (uuid, subscriber) in subscribers {
            subscriber.subscription.finish()
            await peripheral?.subscriptionChanged(uuid, isSubscribed: false)
        }
    }

    // MARK: The central's side

    func read(_ uuid: BluetoothUUID) async throws(BlueZError) -> [UInt8] {
        guard let peripheral else { throw .notConnected }
        do { return try await peripheral.read(uuid) } catch { throw BlueZError(BlueZErrorReply.fromATT(error.code).busError) }
    }

    func write(_ uuid: BluetoothUUID, _ bytes: [UInt8], withResponse: Bool) async throws(BlueZError) {
        guard let peripheral else { throw .notConnected }
        do {
            try await peripheral.write(uuid, value: bytes, kind: withResponse ? .request : .command)
        } catch {
            // A write without response has no answer to carry an error back, as on the air.
            if withResponse { throw BlueZError(BlueZErrorReply.fromATT(error.code).busError) }
        }
    }

    func subscribe(_ uuid: BluetoothUUID, handler: @escaping @Sendable ([UInt8]) -> Void) async -> NotificationSubscription {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        let subscription = NotificationSubscription { [weak self] in self?.unsubscribe(uuid, id: id) }
        let (replaced, peripheral) = state.withLock { state -> (Subscriber?, (any SimulatedPeripheral)?) in
            guard !state.ended else { return (nil, nil) }
            defer { state.subscribers[uuid] = Subscriber(id: id, handler: handler, subscription: subscription) }
            return (state.subscribers[uuid], state.peripheral)
        }
        guard let peripheral else {
            subscription.finish()
            return subscription
        }
        replaced?.subscription.finish()
        await peripheral.subscriptionChanged(uuid, isSubscribed: true)
        return subscription
    }

    /// Ends the subscription to `uuid` while the link stays up (a fault a test asks for).
    func endNotifications(_ uuid: BluetoothUUID) {
        let removed = state.withLock { $0.subscribers.removeValue(forKey: uuid) }
        removed?.subscription.finish()
    }

    private func unsubscribe(_ uuid: BluetoothUUID, id: UInt64) {
        let peripheral = state.withLock { state -> (any SimulatedPeripheral)? in
            guard state.subscribers[uuid]?.id == id else { return nil }
            state.subscribers[uuid] = nil
            return state.peripheral
        }
        if let peripheral { Task { await peripheral.subscriptionChanged(uuid, isSubscribed: false) } }
    }

    // MARK: PeripheralLink

    func isSubscribed(_ characteristic: BluetoothUUID) async -> Bool {
        state.withLock { $0.subscribers[characteristic] != nil }
    }

    @discardableResult
    func notify(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool {
        guard let handler = state.withLock({ $0.subscribers[characteristic]?.handler }) else { return false }
        handler(Array(value.prefix(mtu - 3)))
        return true
    }

    @discardableResult
    func indicate(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool {
        await notify(characteristic, value: value)
    }

    /// The peripheral hangs up.
    func disconnect() async {
        await central.withLock({ $0 })?.endConnection(device)
    }
}
