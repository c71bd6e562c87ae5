import BlueZ
import ESPHome

/// Which radio serves a device when its session connects: the one holding it if any does (a session never loses its
/// link to a change of mind), else the one that hears it best lately among those with a free connection slot — the
/// local adapter (by BlueZ's RSSI) or an ESPHome proxy (by its advertisements) — else the configured adapter, where
/// discovery then looks for it. Moving a connected device to a better radio with hysteresis comes later (issue 42).
public final class RadioRouter: Sendable {
    public let local: any BluetoothCentral
    public let proxies: [ESPHomeCentral]
    /// A sighting older than this does not count.
    public let freshness: Duration

    public init(local: any BluetoothCentral, proxies: [ESPHomeCentral], freshness: Duration = .seconds(30)) {
        self.local = local
        self.proxies = proxies
        self.freshness = freshness
    }

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
        var best: (adapter: AdapterInfo, rssi: Int)?
        if let fallback, fallback.powered, let rssi = localModel.device(address: address, adapter: fallback.path)?.rssi {
            best = (fallback, rssi)
        }
        for proxy in proxies {
            guard proxy.isServiceAvailable, let adapter = proxy.model.adapters[proxy.adapterPath], adapter.powered,
                  let heard = proxy.lastHeard(address), heard.age < freshness else { continue }
            let slots = proxy.slots
            if slots.limit > 0, slots.free == 0 { continue }
            if best == nil || heard.rssi > best!.rssi { best = (adapter, heard.rssi) }
        }
        return best?.adapter ?? fallback
    }
}
