import BlueZ
import DBus
import Simulator
import SimulatedWearables

/// What a test does to the world around the central: devices coming into range, faults, the user's hand.
extension InMemoryCentral {
    /// Hosts `peripheral` at `address`. `known`: BlueZ already has its device object (seen before the gateway
    /// started); otherwise it appears when discovery runs while the device is in range.
    public func add(_ peripheral: any SimulatedPeripheral, address: BluetoothAddress, rssi: Int? = nil, known: Bool = true) {
        let path = InMemoryObjects.devicePath(address)
        let layout = GATTLayout(deviceServices: peripheral.services, deviceName: peripheral.deviceName,
                                appearance: peripheral.advertisement.appearance)
        let discovering = state.withLock { state -> Bool in
            state.hosted[path] = Hosted(peripheral: peripheral, address: address, path: path, layout: layout,
                                        rssi: rssi ?? peripheral.advertisement.rssi, inRange: true, known: false)
            return state.discovering
        }
        if known || discovering { announce(path) }
        if let companion = peripheral.companion { host(companion, of: address) }
    }

    /// Moves a device out of range (its link drops, it is not seen) or back into it (seen at once while discovering).
    public func setInRange(_ address: BluetoothAddress, _ inRange: Bool) async {
        let path = InMemoryObjects.devicePath(address)
        let discovering = state.withLock { state -> Bool in
            state.hosted[path]?.inRange = inRange
            return state.discovering
        }
        if !inRange { await endConnection(path) } else if discovering { announce(path) }
    }

    /// BlueZ hears the device's advertisement at `rssi` dBm (it reports RSSI while discovering).
    public func setRSSI(_ address: BluetoothAddress, _ rssi: Int) {
        let path = InMemoryObjects.devicePath(address)
        state.withLock { $0.hosted[path]?.rssi = rssi }
        apply { model in
            model.propertiesChanged(path: path, interface: BlueZNames.device, changed: ["RSSI": .int16(Int16(clamping: rssi))], invalidated: [])
        }
    }

    /// The peripheral (or the radio between) ends the link; the device stays in range.
    public func dropLink(_ address: BluetoothAddress) async {
        await endConnection(InMemoryObjects.devicePath(address))
    }

    /// Subscribing to `characteristic` (any UUID form) fails with `error`, as BlueZ answers for a device that wants
    /// bonding before it notifies (`NotPermitted`); nil lets subscriptions through again.
    public func refuseNotifications(_ characteristic: String, with error: BlueZError? = InMemoryCentral.notPaired) {
        guard let uuid = BluetoothUUID(string: characteristic) else { return }
        state.withLock { $0.refused[uuid.string] = error }
    }

    /// What BlueZ answers StartNotify and AcquireNotify on a characteristic that needs a bond first.
    public static let notPaired = BlueZError.failed(name: "org.bluez.Error.NotPermitted", message: "Not paired")

    /// The current subscription to `characteristic` on `address` ends while the link stays up.
    public func endNotifications(_ characteristic: String, on address: BluetoothAddress) {
        guard let uuid = BluetoothUUID(string: characteristic),
              let connection = state.withLock({ $0.hosted[InMemoryObjects.devicePath(address)]?.connection }) else { return }
        connection.endNotifications(uuid)
    }

    /// Reads and writes on `address` are answered `latency` later (a slow or distant device); nil: at once.
    public func setLatency(_ address: BluetoothAddress, _ latency: Duration?) {
        state.withLock { $0.latency[InMemoryObjects.devicePath(address)] = latency }
    }

    /// A disconnection of `address` completes `latency` later (BlueZ waits for the link to close), so requests that
    /// stop a device's session overlap with those arriving meanwhile; nil: at once.
    public func setDisconnectLatency(_ address: BluetoothAddress, _ latency: Duration?) {
        state.withLock { $0.disconnectLatency[InMemoryObjects.devicePath(address)] = latency }
    }

    /// The next write to `address` fails with `error` and does not reach the device, as when the peripheral
    /// answers with an ATT error (`BlueZError.failed(name: "org.bluez.Error.Failed", message: "Operation failed
    /// with ATT error: 0x81")`).
    public func failNextWrite(_ address: BluetoothAddress, with error: BlueZError) {
        state.withLock { $0.failNextWrite[InMemoryObjects.devicePath(address)] = error }
    }

    /// The next `count` connection attempts fail as a busy controller makes them fail.
    public func failConnections(_ count: Int) {
        state.withLock { $0.connectionFailures = count }
    }

    /// Something the user does on the device (a button, a spot-check); false when it has no such thing.
    @discardableResult
    public func trigger(_ event: DeviceEvent, on address: BluetoothAddress) async -> Bool {
        guard let (peripheral, connection) = state.withLock({ state -> (any SimulatedPeripheral, InMemoryConnection?)? in
            state.hosted[InMemoryObjects.devicePath(address)].map { ($0.peripheral, $0.connection) }
        }) else { return false }
        return await peripheral.handle(event, link: connection)
    }

    /// What the device shows that a central cannot read (`SimulatedPeripheral.inspect`).
    public func inspect(_ address: BluetoothAddress) async -> [String: String] {
        guard let peripheral = state.withLock({ $0.hosted[InMemoryObjects.devicePath(address)]?.peripheral }) else { return [:] }
        return await peripheral.inspect()
    }

    /// Whether a subscription to `characteristic` on `address` is live now.
    public func isSubscribed(_ characteristic: String, on address: BluetoothAddress) async -> Bool {
        guard let uuid = BluetoothUUID(string: characteristic),
              let connection = state.withLock({ $0.hosted[InMemoryObjects.devicePath(address)]?.connection }) else { return false }
        return await connection.isSubscribed(uuid)
    }

    /// How often the central connected to `address`.
    public func connectionCount(_ address: BluetoothAddress) -> Int {
        state.withLock { $0.connects[address] ?? 0 }
    }

    /// Every write with its characteristic (128-bit UUID) and bytes, for `address`, in order.
    public func writes(to address: BluetoothAddress) -> [(characteristic: String, bytes: [UInt8])] {
        state.withLock { $0.writes.filter { $0.0 == address }.map { ($0.1, $0.2) } }
    }

    /// BlueZ's object path of the device at `address`.
    public func path(of address: BluetoothAddress) -> ObjectPath { InMemoryObjects.devicePath(address) }
}
