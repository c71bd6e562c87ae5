import BlueZ
import DBus
import Logging

/// How sure a driver is that a device is its own; the registry picks the highest.
public enum DriverMatch: Int, Sendable, Comparable {
    /// Standard services a generic driver can serve.
    case generic = 1
    /// A vendor service UUID or a name pattern the vendor uses.
    case likely = 2
    /// A vendor's manufacturer id and service together: it is this device family.
    case certain = 3

    public static func < (lhs: DriverMatch, rhs: DriverMatch) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// What the driver knows of a device before connecting: its advertisement and BlueZ properties.
public typealias Advertisement = DeviceInfo

/// A driver for one family of wearables.
///
/// A driver recognises its devices from their advertisement, runs a session while one is connected
/// (reading information, subscribing, emitting `WearableEvent`s) and executes commands. It knows BlueZ and
/// bytes (through its codec), never topics or JSON. One instance serves one device for the gateway's
/// lifetime, so it can keep what must survive a reconnect (configuration to re-apply, sync position).
public protocol WearableDriver: AnyObject, Sendable {
    /// The registry key and the `<driver>` of default device ids (`[a-z0-9_]`).
    static var name: String { get }
    /// Shown in `bridge/devices`.
    static var vendor: String { get }
    /// How well this driver fits `device`, or nil when it does not.
    static func match(_ device: Advertisement) -> DriverMatch?
    /// The commands this driver may accept (the contract's names), before a connection tells which apply.
    static var commands: Set<String> { get }

    /// The serial a device of this family advertises (an ActiGraph Link's name), nil when it advertises none:
    /// shown by scans and accepted by `device/add` in place of the address.
    static func serial(of device: Advertisement) -> String?
    /// The vendor's code for "this device is already connected", given as `vendor_code` when `device/add` names a
    /// managed device again (the ActiGraph SDK's 10); nil when the vendor has none.
    static var existingConnectionVendorCode: Int? { get }

    init(configuration: DriverConfiguration)

    /// Runs while the device is connected with its services resolved: reads what it needs, subscribes and
    /// emits events through `link`. Returns when the link is gone or the task is cancelled. Throwing ends
    /// the connection (the gateway disconnects and tries again later).
    func session(_ link: DeviceLink) async throws

    /// Executes one command while connected. The gateway queues commands and runs one at a time.
    func execute(_ command: DeviceCommand, link: DeviceLink) async throws(CommandError) -> DeviceValue
}

extension WearableDriver {
    public static func serial(of device: Advertisement) -> String? { nil }
    public static var existingConnectionVendorCode: Int? { nil }
}

/// Per-device settings a driver gets from the gateway's configuration and options.
public struct DriverConfiguration: Sendable {
    public var address: BluetoothAddress
    public var notifyMethod: NotifyMethod
    /// Driver-specific options from the device's configuration (`devices[].options`).
    public var options: [String: DeviceValue]
    /// A `request/configure` payload to apply on every connection until a request replaces it: from
    /// `devices[].configure` in config.yaml, or the last configuration accepted before a restart.
    public var configure: [String: DeviceValue]
    /// What the driver keeps for this device across restarts (credentials, sync position).
    public var storage: DriverStorage

    public init(address: BluetoothAddress, notifyMethod: NotifyMethod = .acquire, options: [String: DeviceValue] = [:],
                configure: [String: DeviceValue] = [:], storage: DriverStorage = .inMemory()) {
        self.address = address
        self.notifyMethod = notifyMethod
        self.options = options
        self.configure = configure
        self.storage = storage
    }
}

/// What a driver may use while its device is connected.
public struct DeviceLink: Sendable {
    public let bluez: BlueZClient
    public let device: ObjectPath
    public let address: BluetoothAddress
    public let notifyMethod: NotifyMethod
    public let logger: Logger
    private let emitter: @Sendable (WearableEvent) -> Void
    private let clock: @Sendable () -> Int64

    public init(bluez: BlueZClient, device: ObjectPath, address: BluetoothAddress, notifyMethod: NotifyMethod,
                logger: Logger, emit: @escaping @Sendable (WearableEvent) -> Void,
                clock: @escaping @Sendable () -> Int64) {
        self.bluez = bluez
        self.device = device
        self.address = address
        self.notifyMethod = notifyMethod
        self.logger = logger
        self.emitter = emit
        self.clock = clock
    }

    public func emit(_ event: WearableEvent) { emitter(event) }

    /// Unix time in milliseconds: the `ts` of samples and events.
    public var now: Int64 { clock() }

    /// The characteristic with this 16-bit SIG UUID (or full UUID string) on the device, if it has one.
    public func characteristic(service: String? = nil, _ uuid: String) -> GattCharacteristicInfo? {
        bluez.model.characteristic(device: device, service: service, uuid: uuid)
    }

    /// Whether BlueZ still reports the device connected: a session ends when this goes false, not when one of
    /// its notification streams ends.
    public var isConnected: Bool { bluez.model.devices[device]?.connected ?? false }

    public func hasService(_ uuid: String) -> Bool {
        bluez.model.services(of: device).contains { $0.uuid == uuid.lowercased() }
    }

    /// Reads a characteristic, mapping BlueZ failures to the contract's errors.
    public func read(_ characteristic: GattCharacteristicInfo) async throws(CommandError) -> [UInt8] {
        do { return try await bluez.read(characteristic.path) } catch { throw CommandError(bluez: error) }
    }

    public func write(_ characteristic: GattCharacteristicInfo, _ bytes: [UInt8], withResponse: Bool) async throws(CommandError) {
        do { try await bluez.write(characteristic.path, bytes, withResponse: withResponse) } catch { throw CommandError(bluez: error) }
    }
}

extension CommandError {
    /// The contract's code for a BlueZ failure.
    public init(bluez error: BlueZError) {
        switch error {
        case .notConnected: self.init(.deviceDisconnected, "the device is not connected")
        case .timeout(let what): self.init(.timeout, "the device did not answer in time (\(what))")
        case .inProgress(let what): self.init(.busy, "BlueZ is busy with this device: \(what)")
        case .connectionLimit(let what): self.init(.busy, "no free connection slot on the adapter: \(what)")
        case .adapterUnavailable(let what): self.init(.adapterUnavailable, what)
        case .serviceUnavailable: self.init(.adapterUnavailable, "BlueZ is not running")
        case .notFound(let what): self.init(.notSupported, "the device does not have this: \(what)")
        case .notSupported(let what): self.init(.notSupported, what)
        case .authenticationFailed(let what): self.init(.pairingFailed, what)
        case .failed(let name, let message): self.init(.internalError, "\(name): \(message)")
        }
    }
}
