import BlueZ
import DBus
import EventLoop
import Logging

/// What a driver may use while its device is connected: the drivers' only way to a device.
///
/// It offers GATT reads, writes and notifications on one device, the device's events going out, and the session
/// skeleton (`runSession`, in DeviceLink+Session.swift). Underneath is a `BluetoothCentral`: BlueZ in production,
/// `InMemoryCentral` in tests. A driver never sees the central, so it cannot reach other devices or the adapter.
public struct DeviceLink: Sendable {
    private let central: any BluetoothCentral
    /// The device's object, for the gateway's firmware update (package access: drivers do not need it).
    package let device: ObjectPath
    public let address: BluetoothAddress
    public let notifyMethod: NotifyMethod
    public let logger: Logger
    private let emitter: @Sendable (WearableEvent) -> Void
    /// The session's clock: what the driver's timeouts, retries and timestamps read (a test's `ManualClock` in memory).
    public let time: TimeSource
    private let durable: DurableRecords
    private let commits: RecordCommits

    public init(central: any BluetoothCentral, device: ObjectPath, address: BluetoothAddress, notifyMethod: NotifyMethod,
                logger: Logger, emit: @escaping @Sendable (WearableEvent) -> Void,
                time: TimeSource, durable: DurableRecords = .immediate,
                commits: RecordCommits = RecordCommits()) {
        self.central = central
        self.device = device
        self.address = address
        self.notifyMethod = notifyMethod
        self.logger = logger
        self.emitter = emit
        self.time = time
        self.durable = durable
        self.commits = commits
    }

    public func emit(_ event: WearableEvent) { emitter(event) }

    /// Emits `records` and returns once the gateway has stored them durably: only then may a driver let the device
    /// forget them (acknowledge a page, advance a cursor). Throws `INTERNAL` if any could not be stored; the device
    /// then keeps them for the next sync.
    public func emitDurably(_ records: [FitnessRecord]) async throws(CommandError) {
        let before = durable.handedOver()
        for record in records { emitter(.record(record)) }
        guard await durable.stored(before, durable.handedOver()) else {
            throw CommandError(.internalError, "the gateway could not store the records durably (see its log); the device keeps them")
        }
    }

    /// Emits `records` durably and then runs `advance` (stores the cursor past them), as one commit the session's
    /// stop waits for: whoever reads the cursor after a stop (the next owner of a roaming device) sees exactly the
    /// records that went out. Once the session is stopping, nothing is emitted and `DEVICE_DISCONNECTED` is thrown:
    /// the device keeps those records for the next sync.
    public func commit(_ records: [FitnessRecord],
                       thenAdvance advance: () throws(CommandError) -> Void) async throws(CommandError) {
        guard commits.begin() else {
            throw CommandError(.deviceDisconnected, "the session is stopping; the device keeps these records for the next sync")
        }
        defer { commits.end() }
        try await emitDurably(records)
        try advance()
    }

    /// Unix time in milliseconds: the `ts` of samples and events.
    public var now: Int64 { time.unixMilliseconds }

    /// The characteristic with this 16-bit SIG UUID (or full UUID string) on the device, if it has one.
    public func characteristic(service: String? = nil, _ uuid: String) -> GattCharacteristicInfo? {
        central.model.characteristic(device: device, service: service, uuid: uuid)
    }

    /// Whether the stack still reports the device connected: a session ends when this goes false, not when one of
    /// its notification streams ends.
    public var isConnected: Bool { central.model.devices[device]?.connected ?? false }

    public func hasService(_ uuid: String) -> Bool {
        central.model.services(of: device).contains { $0.uuid == uuid.lowercased() }
    }

    /// Reads a characteristic, mapping stack failures to the contract's errors.
    public func read(_ characteristic: GattCharacteristicInfo) async throws(CommandError) -> [UInt8] {
        do { return try await central.read(characteristic.path) } catch { throw CommandError(bluez: error) }
    }

    public func write(_ characteristic: GattCharacteristicInfo, _ bytes: [UInt8], withResponse: Bool) async throws(CommandError) {
        do { try await central.write(characteristic.path, bytes, withResponse: withResponse) } catch { throw CommandError(bluez: error) }
    }

    /// A write the device may refuse with an ATT error the driver gives a meaning to (Bose refuses a configuration
    /// it cannot take with one): `rejected` turns that code into the command's error; other failures map as usual.
    public func write(_ characteristic: GattCharacteristicInfo, _ bytes: [UInt8], withResponse: Bool,
                      rejected: (UInt8) -> CommandError) async throws(CommandError) {
        do { try await central.write(characteristic.path, bytes, withResponse: withResponse) } catch {
            if let code = error.attErrorCode { throw rejected(code) }
            throw CommandError(bluez: error)
        }
    }

    /// One subscription, with the device's notify method: `handler` gets every value until the link drops or the
    /// subscription is cancelled. Most drivers want `runSession`, which also retries and reports.
    public func subscribe(_ characteristic: GattCharacteristicInfo,
                          handler: @escaping @Sendable ([UInt8]) -> Void) async throws(CommandError) -> NotificationSubscription {
        do { return try await central.subscribe(characteristic.path, method: notifyMethod, handler: handler) } catch {
            throw CommandError(bluez: error)
        }
    }

    /// Returns when the device is no longer connected, or the task is cancelled.
    public func waitForDisconnection() async {
        await central.waitForDisconnection(device)
    }

    /// Whether the link is down, or goes down within `limit`: a failure that races the link's end is a lost link,
    /// not a refusal (BlueZ fails such a write with a generic `Failed` before `Connected` turns false).
    public func goesDown(within limit: Duration) async -> Bool {
        let device = device
        return await central.wait(timeout: limit) { !($0.devices[device]?.connected ?? false) }
    }
}
