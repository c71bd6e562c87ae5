import BlueZ
import DBus
import FoundationEssentials
import Logging
import Wearables

/// `bridge/request/scan`: one scan at a time, its finds as `device_found` events and in its answer.
extension DeviceManager {
    /// Scans for `duration`, reporting each device once as `device_found` (and again when its RSSI moves by
    /// 10 dB or more); the answer lists everything found, when the time is up or `scan/stop` ends it early.
    /// One scan at a time: another while one runs is `BUSY` (it would share the adapter's discovery with another
    /// filter, and its end would end the first).
    public func scan(duration: Duration, filter scanFilter: DiscoveryFilter) async throws(CommandError) -> [[String: DeviceValue]] {
        guard let adapter else { throw CommandError(.adapterUnavailable, "no Bluetooth adapter") }
        guard adapter.powered else { throw CommandError(.adapterUnavailable, "adapter \(adapter.id) is powered off") }
        if let running = scan {
            let left = max(1, Int(((running.ends - time.now) / .seconds(1)).rounded(.up)))
            throw CommandError(.busy, "a scan is running for another \(left) s (one at a time); what it finds is on bridge/event "
                               + "as device_found, or send bridge/request/scan/stop first")
        }
        // Unstructured: the scan's deadline, outliving the request that started it; cancelled by scan/stop.
        let timer = Task<Void, Never> { [time] in try? await time.sleep(for: duration) }
        // Taken before the first suspension, so a second request arriving meanwhile sees this one running.
        scan = (lease: nil, task: Task {}, found: [:], ends: time.now + duration, timer: timer)
        let lease = await discovery.acquire(adapter: adapter.path, filter: scanFilter)
        let updates = bluez.events()
        // Unstructured: the scan's event reader, outliving the request that started it; cancelled when the scan ends.
        let task = Task { [weak self] in
            for await event in updates {
                switch event {
                case .deviceAdded(let info), .deviceChanged(let info, _):
                    await self?.found(info)
                default: break
                }
            }
        }
        guard scan?.timer == timer else {
            // Stopped while discovery was starting.
            task.cancel()
            await discovery.release(lease)
            return []
        }
        scan?.lease = lease
        scan?.task = task
        for info in bluez.model.devices.values where info.adapter == adapter.path && info.rssi != nil { found(info) }
        await timer.value
        let result = Array(scan?.found.values ?? finishedScan.values)
        if scan?.timer == timer { stopScan() }
        return result.sorted { ($0["address"]?.text ?? "") < ($1["address"]?.text ?? "") }
    }

    public func stopScan() {
        guard let current = scan else { return }
        scan = nil
        finishedScan = current.found
        current.timer.cancel()
        current.task.cancel()
        // A scan stopped while its discovery was starting has no lease yet: `scan` lets go of it when it comes.
        guard let lease = current.lease else { return }
        let discovery = discovery
        // Unstructured: stopping a scan is synchronous; releasing its discovery lease is the discovery actor's.
        Task { await discovery.release(lease) }
    }

    func found(_ info: DeviceInfo) {
        guard scan != nil, let address = info.address else { return }
        let driver = registry.bestMatch(for: info)
        var entry: [String: DeviceValue] = [
            "address": .text(address.rawValue),
            "uuids": .list(info.serviceUUIDs.map(DeviceValue.text)),
            "managed": .flag(devices.values.contains { $0.address == address.rawValue }),
        ]
        if let name = info.name ?? info.alias { entry["name"] = .text(name) }
        if let rssi = info.rssi { entry["rssi"] = .integer(Int64(rssi)) }
        if let driver {
            entry["driver"] = .text(driver.name)
            if let serial = driver.serial(of: info) { entry["serial"] = .text(serial) }
        }
        let previous = scan?.found[address.rawValue]
        scan?.found[address.rawValue] = entry
        let moved = abs((previous?["rssi"]?.integer ?? 0) - (entry["rssi"]?.integer ?? 0)) >= 10
        if previous == nil || moved {
            output(.bridgeEvent(type: "device_found", data: entry))
        }
    }
}
