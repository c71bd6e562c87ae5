import EventLoop
import SimulatedWearables
import Synchronization

/// One active connection of the simulated proxy to a simulated peripheral: the peripheral's `PeripheralLink`, and the
/// ATT server side of the requests the proxy's client makes by handle.
///
/// Requests go through `queue` one at a time, as ATT allows one outstanding request per link; each takes the
/// scenario's ATT round trip. The client configuration descriptors live here, per link, as on a peripheral without
/// bonding: the peripheral hears `subscriptionChanged` only when its CCCD is written, never from the proxy's
/// `BluetoothGATTNotifyRequest` (which only tells the ESP32's own stack to pass notifications of that handle on).
final class ProxyLink: PeripheralLink {
    private struct State {
        /// Each CCCD's value by characteristic: 1 notifications, 2 indications; absent is 0.
        var configuration: [BluetoothUUID: UInt16] = [:]
        var descriptorValues: [UInt16: [UInt8]] = [:]
        var ended = false
    }

    let mtu: Int
    let table: ProxyGATTTable
    let peripheral: any SimulatedPeripheral
    let roundTrip: Duration
    let queue = OrderedWorkQueue()
    private let state = Mutex(State())
    private let behaviour = Mutex<Task<Void, Never>?>(nil)
    /// Hands a notification (value handle, bytes) to the proxy's loop.
    private let notification: @Sendable (UInt16, [UInt8]) -> Void
    /// The peripheral hung up: tells the proxy's loop.
    private let hangUp: @Sendable () -> Void

    init(device: ProxiedDevice, mtu: Int, notification: @escaping @Sendable (UInt16, [UInt8]) -> Void,
         hangUp: @escaping @Sendable () -> Void) {
        self.mtu = mtu
        table = device.table
        peripheral = device.peripheral
        roundTrip = device.settings.attRoundTrip
        self.notification = notification
        self.hangUp = hangUp
    }

    /// The peripheral's behaviour runs for as long as the link is up.
    func start() {
        let peripheral = self.peripheral
        behaviour.withLock { $0 = Task { await peripheral.run(on: self) } }
    }

    /// The link is gone: requests still queued are dropped, the behaviour is cancelled and the peripheral hears its
    /// subscriptions end, as on a real disconnection.
    func end() {
        let subscribed = state.withLock { state -> [BluetoothUUID] in
            defer { state.ended = true; state.configuration = [:] }
            return state.ended ? [] : Array(state.configuration.keys)
        }
        queue.cancel()
        behaviour.withLock { $0?.cancel() }
        let peripheral = self.peripheral
        let hostOwned = Set(table.layout.services.flatMap(\.characteristics).filter(\.isHostOwned).map(\.uuid))
        Task {
            for uuid in subscribed.sorted() where !hostOwned.contains(uuid) {
                await peripheral.subscriptionChanged(uuid, isSubscribed: false)
            }
        }
    }

    private var isEnded: Bool { state.withLock { $0.ended } }

    // MARK: ATT, by handle

    func read(_ handle: UInt32) async -> Result<[UInt8], ATTError> {
        await pause()
        switch table.attribute(handle) {
        case nil:
            return .failure(.invalidHandle)
        case .value(let characteristic)?:
            guard characteristic.flags.contains(.read) else { return .failure(.readNotPermitted) }
            if characteristic.isHostOwned { return .success(characteristic.initialValue) }
            do { return .success(try await peripheral.read(characteristic.uuid)) } catch { return .failure(error) }
        case .descriptor(let characteristic, let descriptor)?:
            return state.withLock { state in
                if descriptor.isClientConfiguration {
                    let value = state.configuration[characteristic.uuid] ?? 0
                    return .success([UInt8(value & 0xFF), UInt8(value >> 8)])
                }
                guard descriptor.flags.contains(.read) else { return .failure(.readNotPermitted) }
                return .success(state.descriptorValues[descriptor.handle] ?? descriptor.initialValue)
            }
        }
    }

    /// A write request (`withResponse`) or command to the attribute at `handle`. A command's failure has no answer on
    /// the air; it is reported here all the same and the caller drops it.
    func write(_ handle: UInt32, _ value: [UInt8], withResponse: Bool) async -> Result<Void, ATTError> {
        await pause()
        switch table.attribute(handle) {
        case nil:
            return .failure(.invalidHandle)
        case .value(let characteristic)?:
            let allowed = withResponse ? characteristic.flags.contains(.write) || characteristic.flags.contains(.reliableWrite)
                : characteristic.flags.contains(.writeWithoutResponse)
            guard allowed, !characteristic.isHostOwned else { return .failure(.writeNotPermitted) }
            do {
                try await peripheral.write(characteristic.uuid, value: value, kind: withResponse ? .request : .command)
                return .success(())
            } catch {
                return .failure(error)
            }
        case .descriptor(let characteristic, let descriptor)?:
            return await writeDescriptor(characteristic, descriptor, value)
        }
    }

    private func writeDescriptor(_ characteristic: GATTLayout.Characteristic, _ descriptor: GATTLayout.Descriptor,
                                 _ value: [UInt8]) async -> Result<Void, ATTError> {
        guard descriptor.isClientConfiguration else {
            guard descriptor.flags.contains(.write) else { return .failure(.writeNotPermitted) }
            state.withLock { $0.descriptorValues[descriptor.handle] = value }
            return .success(())
        }
        guard value.count == 2 else { return .failure(.invalidAttributeValueLength) }
        let bits = UInt16(value[0]) | UInt16(value[1]) << 8
        let canNotify = characteristic.flags.contains(.notify), canIndicate = characteristic.flags.contains(.indicate)
        guard bits & ~3 == 0, bits & 1 == 0 || canNotify, bits & 2 == 0 || canIndicate else {
            return .failure(.cccdImproperlyConfigured)
        }
        let change = state.withLock { state -> Bool? in
            guard !state.ended else { return nil }
            let was = state.configuration[characteristic.uuid] != nil, now = bits != 0
            state.configuration[characteristic.uuid] = now ? bits : nil
            return was != now ? now : nil
        }
        if let subscribed = change, !characteristic.isHostOwned {
            await peripheral.subscriptionChanged(characteristic.uuid, isSubscribed: subscribed)
        }
        return .success(())
    }

    private func pause() async {
        try? await Task.sleep(for: roundTrip)
    }

    // MARK: PeripheralLink

    func isSubscribed(_ characteristic: BluetoothUUID) async -> Bool {
        state.withLock { !$0.ended && $0.configuration[characteristic] != nil }
    }

    @discardableResult
    func notify(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool {
        guard await isSubscribed(characteristic), let handle = table.valueHandle(of: characteristic) else { return false }
        notification(handle, Array(value.prefix(mtu - 3)))
        return true
    }

    /// The ESP32's stack confirms indications itself; to the client they are notifications like any other.
    @discardableResult
    func indicate(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool {
        await notify(characteristic, value: value)
    }

    func disconnect() async {
        guard !isEnded else { return }
        hangUp()
    }
}
