import BlueZ
import DBus
import ESPHome
import Logging
import Wearables

/// The radio watchdog's side of the core: started over the attached radios, its news published.
extension GatewayCore {
    /// Builds the watchdog over the local adapters (every one BlueZ shows, and those it showed before) and the
    /// proxies, unless `watchdog.enabled` is off or nothing is attached. The caller runs it.
    public func startRadioWatchdog(local: BlueZClient, proxies: [ESPHomeCentral]) -> RadioWatchdogService? {
        guard configuration.watchdog.enabled, let (central, manager) = attached.withLock({ $0 }) else { return nil }
        let discovery = manager.discovery
        let service = RadioWatchdogService(
            settings: configuration.watchdog.settings, interval: .seconds(configuration.watchdog.intervalSeconds),
            time: time, logger: Logger(label: "radios"),
            radios: {
                let adapters = local.model.adapters.keys.map { path -> any WatchedRadio in
                    LocalAdapterRadio(path: path, central: central, discovery: discovery) { powered throws(BlueZError) in
                        try await local.setPowered(powered, adapter: path)
                    }
                }
                return adapters + proxies.map { ProxyWatchedRadio(proxy: $0) }
            },
            report: { [weak self] radio, status, step in self?.radioReported(radio, status: status, step: step) },
            watching: { [weak self] in self?.publishBridgeInfo() })
        radioWatchdog.withLock { $0 = service }
        return service
    }

    /// A radio's status changed or a step was taken: `bridge/event` radio_changed, a fresh `bridge/info`, the metric.
    func radioReported(_ radio: any WatchedRadio, status: RadioStatus, step: RadioWatchdog.Step?) {
        if let step { metrics?.recordRadioStep(radio: radio.id, step: step.rawValue) }
        var data = radioEntry(kind: radio.kind, status: status)
        data["id"] = .text(radio.id)
        if let step { data["step"] = .text(step.rawValue) }
        sink.publish(messages.bridgeEvent(BridgeEvent(.radioChanged, data: data)))
        publishBridgeInfo()
    }

    /// `bridge/info`'s adapters: each one BlueZ or a proxy shows, with its watchdog state, and the watched ones gone.
    func radioEntries(_ adapters: [AdapterInfo]) -> [[String: DeviceValue]] {
        let statuses = radioWatchdog.withLock { $0?.statuses } ?? [:]
        var entries = adapters.map { adapter in
            var entry = Self.adapterEntry(adapter)
            if let (kind, status) = statuses[adapter.id] { entry.merge(radioEntry(kind: kind, status: status)) { $1 } }
            return entry
        }
        let shown = Set(adapters.map(\.id))
        for (id, (kind, status)) in statuses.sorted(by: { $0.key < $1.key }) where !shown.contains(id) {
            var entry: [String: DeviceValue] = ["id": .text(id), "address": .null, "powered": false, "discovering": false]
            entry.merge(radioEntry(kind: kind, status: status)) { $1 }
            entries.append(entry)
        }
        return entries
    }

    /// `bridge/health`'s radios: each watched radio's state, what is wrong, the steps taken.
    func radioHealth() -> [String: [String: DeviceValue]] {
        let statuses = radioWatchdog.withLock { $0?.statuses } ?? [:]
        return statuses.mapValues { kind, status in
            var entry = radioEntry(kind: kind, status: status)
            entry["since_s"] = .integer((time.now - status.since).components.seconds)
            return entry
        }
    }

    /// The watchdog's fields of a radio: kind, state, reason (a sentence, null when fine), symptom, steps.
    func radioEntry(kind: RadioKind, status: RadioStatus) -> [String: DeviceValue] {
        let silence = Duration.seconds(configuration.watchdog.silenceSeconds)
        return [
            "kind": .text(kind.rawValue), "state": .text(status.state.rawValue),
            "reason": status.reason(kind: kind, silence: silence).map(DeviceValue.text) ?? .null,
            "symptom": status.symptom.map { .text($0.rawValue) } ?? .null,
            "steps": .integer(Int64(status.steps)),
        ]
    }
}
