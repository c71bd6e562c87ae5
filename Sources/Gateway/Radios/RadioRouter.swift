import BlueZ
import DBus
import ESPHome
import Synchronization

/// Which radio serves a device when its session connects: the one holding it if any does (a session never loses its
/// link to a change of mind), else `RadioChoice` among the radios that heard it in the last `freshness` with a free
/// connection slot — the local adapter (by BlueZ's RSSI) or an ESPHome proxy (by its smoothed advertisements) — else
/// a proxy that heard it with its slots taken (the device waits for one: an on-demand band does not take the local
/// adapter, which never heard it, for a radio with slots to spare), else the configured adapter, where discovery then
/// looks for it. A connected device is not moved to a louder radio: a
/// handover costs a reconnect and a gap in its data; it moves when its link drops (radio lost, walked out of range).
public final class RadioRouter: Sendable {
    public let local: any BluetoothCentral
    public let proxies: [ESPHomeCentral]
    /// A sighting older than this does not count.
    public let freshness: Duration
    public let choice: RadioChoice
    /// The radio each device last connected through.
    private let previous = Mutex<[BluetoothAddress: ObjectPath]>([:])

    public init(local: any BluetoothCentral, proxies: [ESPHomeCentral], freshness: Duration = .seconds(30),
                choice: RadioChoice = RadioChoice()) {
        self.local = local
        self.proxies = proxies
        self.freshness = freshness
        self.choice = choice
    }

    /// Whether the adapter path is an ESPHome proxy's: 3–4 connection slots, worth giving back (`link: auto`).
    public func isProxy(_ adapter: ObjectPath) -> Bool { proxies.contains { $0.adapterPath == adapter } }

    public func adapter(for address: BluetoothAddress, fallback: AdapterInfo?) -> AdapterInfo? {
        let localModel = local.model
        // Held: stay where the link is.
        if let device = localModel.devices.values.first(where: { $0.address == address && $0.connected }),
           let adapter = localModel.adapters[device.adapter] { return adapter }
        for proxy in proxies {
            let model = proxy.model
            if model.devices.values.contains(where: { $0.address == address && $0.connected }),
               let adapter = model.adapters[proxy.adapterPath] { return adapter }
        }
        var adapters: [ObjectPath: AdapterInfo] = [:]
        var candidates: [RadioChoice.Candidate] = []
        // A proxy that heard it with every slot taken: where it waits for a slot, when no other radio hears it.
        var busy: AdapterInfo?
        if let fallback, fallback.powered, let rssi = localModel.device(address: address, adapter: fallback.path)?.rssi {
            adapters[fallback.path] = fallback
            candidates.append(.init(adapter: fallback.path, rssi: rssi))
        }
        for proxy in proxies {
            guard proxy.isServiceAvailable, let adapter = proxy.model.adapters[proxy.adapterPath], adapter.powered,
                  let heard = proxy.lastHeard(address), heard.age < freshness else { continue }
            let slots = proxy.slots
            if slots.limit > 0, slots.free == 0 {
                busy = busy ?? adapter
                continue
            }
            adapters[adapter.path] = adapter
            candidates.append(.init(adapter: adapter.path, rssi: heard.rssi))
        }
        guard let chosen = choice.choose(candidates, previous: previous.withLock { $0[address] }) else { return busy ?? fallback }
        previous.withLock { $0[address] = chosen }
        return adapters[chosen]
    }
}
