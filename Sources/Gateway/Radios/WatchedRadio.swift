import BlueZ
import DBus
import ESPHome

/// A radio as the watchdog sees it: how it looks, and the two steps that can bring it back.
public protocol WatchedRadio: Sendable {
    /// The adapter's id (hci0) or the proxy's name, as in `bridge/info`.
    var id: String { get }
    var kind: RadioKind { get }
    func look() async -> RadioLook
    func restartDiscovery() async
    func reset() async
}

/// One look at a radio; the watchdog turns the advertisement count into "last heard".
public struct RadioLook: Sendable, Equatable {
    public var present: Bool
    public var powered: Bool
    public var scanningWanted: Bool
    public var discovering: Bool
    /// Advertisements delivered since some start: only its changes count.
    public var advertisements: UInt64
    public var connectedDevices: Int
}

/// A local BlueZ adapter, followed by its path even while it is gone (a dongle pulled comes back as the same hci).
struct LocalAdapterRadio: WatchedRadio {
    let path: ObjectPath
    let central: any BluetoothCentral
    let discovery: DiscoveryCoordinator
    let setPowered: @Sendable (Bool) async throws(BlueZError) -> Void

    var id: String { path.rawValue.split(separator: "/").last.map(String.init) ?? path.rawValue }
    var kind: RadioKind { .adapter }

    func look() async -> RadioLook {
        let model = central.model
        let adapter = model.adapters[path]
        return RadioLook(present: adapter != nil, powered: adapter?.powered ?? false,
                         scanningWanted: await discovery.isHeld(path), discovering: adapter?.discovering ?? false,
                         advertisements: model.advertisementsHeard[path] ?? 0,
                         connectedDevices: model.devices.values.count { $0.adapter == path && $0.connected })
    }

    func restartDiscovery() async { await discovery.restart(adapter: path) }

    /// Off, a second, on (as `bluetoothctl power off; power on`), then discovery asked for again: power-off ends
    /// every discovery session.
    func reset() async {
        if central.model.adapters[path]?.powered == true {
            try? await setPowered(false)
            try? await Task.sleep(for: .seconds(1))
        }
        try? await setPowered(true)
        await discovery.restart(adapter: path)
    }
}

/// An ESPHome proxy: it listens all the time while connected.
struct ProxyWatchedRadio: WatchedRadio {
    let proxy: ESPHomeCentral

    var id: String { proxy.name }
    var kind: RadioKind { .proxy }

    func look() async -> RadioLook {
        let connected = proxy.isServiceAvailable
        return RadioLook(present: connected, powered: connected, scanningWanted: connected, discovering: connected,
                         advertisements: proxy.advertisementsHeard,
                         connectedDevices: proxy.model.devices.values.count(where: \.connected))
    }

    func restartDiscovery() async { proxy.resubscribeAdvertisements() }

    func reset() async { proxy.reconnect(reason: "the radio watchdog reconnects it") }
}
