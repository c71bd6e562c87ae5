import Wearables

/// A simulated BLE peripheral: what it advertises, the GATT table it serves, and how it behaves while a
/// central is connected.
///
/// The protocol knows nothing of D-Bus or BlueZ. The simulator (`Sources/Simulator`) hosts a peripheral behind
/// a BlueZ-compatible D-Bus API; the same model could be served by a real adapter through bluetoothd's
/// GattManager1, because it only answers reads and writes and pushes notifications through a `PeripheralLink`.
///
/// Implementations are actors (or otherwise safe to call concurrently): the host calls reads, writes and events
/// while `run(on:)` is pushing notifications. Given the same seed they produce the same values in the same order;
/// only the wall-clock timing varies.
public protocol SimulatedPeripheral: AnyObject, Sendable {
    /// What the device advertises when the simulation starts; the host may override the RSSI and the name.
    var advertisement: SimulatedAdvertisement { get }
    /// The device's own services in handle order (see `SimulatedService` for what the host adds).
    var services: [SimulatedService] { get }
    /// The GAP Device Name a central reads after connecting (often longer than the advertised name).
    var deviceName: String { get }

    /// Runs for as long as a central is connected and is cancelled when the link goes: the place for periodic
    /// notifications. Returning early is fine; the link stays up.
    func run(on link: any PeripheralLink) async

    /// A central reads `characteristic`; the host has checked the `read` flag and applies the offset.
    func read(_ characteristic: BluetoothUUID) async throws(ATTError) -> [UInt8]

    /// A central wrote `value` to `characteristic`; the host has checked the flags. Errors thrown for a write
    /// without response are dropped, as on the air.
    func write(_ characteristic: BluetoothUUID, value: [UInt8], kind: WriteKind) async throws(ATTError)

    /// A central enabled (`true`) or disabled notifications or indications on `characteristic`.
    func subscriptionChanged(_ characteristic: BluetoothUUID, isSubscribed: Bool) async

    /// Something happened on the device side. `link` is the current connection, if any. Returns false when the
    /// device has no such thing (a heart-rate strap has no button).
    func handle(_ event: DeviceEvent, link: (any PeripheralLink)?) async -> Bool

    /// What the device shows or has counted that a central cannot read over the air (a pairing code on its
    /// display, how often it vibrated), for tests and demos through the simulator's control interface
    /// (`Inspect`). Keys and values are the device's own; empty for devices with nothing to show.
    func inspect() async -> [String: String]

    /// The other device this one sometimes is (its DFU bootloader), which the host serves at another address when
    /// the peripheral switches to it; nil for most devices (the default).
    var companion: SimulatedCompanion? { get }
}

extension SimulatedPeripheral {
    public func subscriptionChanged(_ characteristic: BluetoothUUID, isSubscribed: Bool) async {}

    public func inspect() async -> [String: String] { [:] }

    public var companion: SimulatedCompanion? { nil }
}

/// Whether a write wants an answer: a Write Request (`request`) does, a Write Command (`command`, "write
/// without response") does not.
public enum WriteKind: Sendable, Equatable {
    case request
    case command
}

/// The connection as the peripheral sees it: how it pushes values to the central and how it hangs up.
public protocol PeripheralLink: Sendable {
    /// The negotiated ATT MTU; a notification carries at most `mtu - 3` bytes.
    var mtu: Int { get }

    /// Whether the central has enabled notifications or indications on `characteristic`.
    func isSubscribed(_ characteristic: BluetoothUUID) async -> Bool

    /// Sends a notification; false when nobody is subscribed or the link is gone (the value is dropped, as a
    /// real peripheral drops it). Values longer than `mtu - 3` are cut, as the ATT layer would.
    @discardableResult
    func notify(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool

    /// Sends an indication and returns once the central confirmed it; false as for `notify`.
    @discardableResult
    func indicate(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool

    /// The peripheral terminates the connection.
    func disconnect() async

    /// Sends `values` as consecutive notifications and returns how many went out before the first that did not
    /// (the rest are dropped). A load generator's call: one hop for a burst instead of one per notification.
    func notify(_ characteristic: BluetoothUUID, values: [[UInt8]]) async -> Int
}

extension PeripheralLink {
    public func notify(_ characteristic: BluetoothUUID, values: [[UInt8]]) async -> Int {
        var sent = 0
        for value in values {
            guard await notify(characteristic, value: value) else { break }
            sent += 1
        }
        return sent
    }
}

/// Things that happen to a device that no central caused.
public enum DeviceEvent: String, Sendable, CaseIterable {
    /// The user pressed the device's button.
    case buttonPress = "button_press"
    /// The user asked the device to make the phone (here: the gateway) ring.
    case findMyPhone = "find_my_phone"
    /// The user took a spot-check measurement (pulse oximeter).
    case spotCheck = "spot_check"
    /// The buttons of a watch's music app (InfiniTime): play, pause, next, previous, volume.
    case musicPlay = "music_play"
    case musicPause = "music_pause"
    case musicNext = "music_next"
    case musicPrevious = "music_previous"
    case musicVolumeUp = "music_volume_up"
    case musicVolumeDown = "music_volume_down"
    /// The buttons of a watch's incoming-call screen (InfiniTime), while a call is shown.
    case callAnswer = "call_answer"
    case callReject = "call_reject"
    case callMute = "call_mute"
}
