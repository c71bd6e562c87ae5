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
    /// Everything the gateway and its surfaces know of this driver (`DriverDescription`), declared once.
    static var driverDescription: DriverDescription { get }
    /// How well this driver fits `device`, or nil when it does not.
    static func match(_ device: Advertisement) -> DriverMatch?

    /// The serial a device of this family advertises (an ActiGraph Link's name), nil when it advertises none:
    /// shown by scans and accepted by `device/add` in place of the address.
    static func serial(of device: Advertisement) -> String?
    /// The settings a device has, for user interfaces that offer them as controls: the description's, or for a
    /// family whose devices differ, what the device's retained state shows (a Bose device's capabilities).
    static func settings(state: [String: DeviceValue]) -> [SettingDescription]

    /// A request as this driver's users write it, in the contract's form, before the gateway parses it: the
    /// ActiGraph SDK's date strings become `since_ts` / `until_ts`. The default passes it unchanged.
    static func contractArguments(for command: String, _ arguments: [String: DeviceValue]) throws(CommandError) -> [String: DeviceValue]

    init(configuration: DriverConfiguration)

    /// Runs while the device is connected with its services resolved: reads what it needs, subscribes and
    /// emits events through `link`. Returns when the link is gone or the task is cancelled. Throwing ends
    /// the connection (the gateway disconnects and tries again later).
    func session(_ link: DeviceLink) async throws

    /// Executes one command while connected. The gateway queues commands and runs one at a time.
    func execute(_ command: DeviceCommand, link: DeviceLink) async throws(CommandError) -> DeviceValue
}

extension WearableDriver {
    /// The registry key and the `<driver>` of default device ids.
    public static var name: String { driverDescription.name }
    public static var vendor: String { driverDescription.vendor }
    /// The commands this driver may accept, before a connection tells which apply.
    public static var commands: Set<String> { driverDescription.commandNames }
    public static var events: [String] { driverDescription.events.map(\.name) }
    /// For events that carry an `action`, the actions by event name.
    public static var eventActions: [String: [String]] {
        Dictionary(uniqueKeysWithValues: driverDescription.events.filter { !$0.actions.isEmpty }.map { ($0.name, $0.actions) })
    }
    public static var recordKinds: Set<String> { Set(driverDescription.recordKinds) }
    public static var firmwareUpdateNote: String? { driverDescription.firmwareUpdate?.note }
    public static var existingConnectionVendorCode: Int? { driverDescription.existingConnectionVendorCode }

    public static func serial(of device: Advertisement) -> String? { nil }
    public static func settings(state: [String: DeviceValue]) -> [SettingDescription] { driverDescription.settings }
    public static func contractArguments(for command: String, _ arguments: [String: DeviceValue]) throws(CommandError) -> [String: DeviceValue] {
        arguments
    }
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
