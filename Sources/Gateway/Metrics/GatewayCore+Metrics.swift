import FoundationEssentials
import Wearables

extension GatewayCore {
    /// A response's first bytes when it succeeded: `ResponsePayload` writes `status` first.
    static let okPrefix = Array(#"{"status":"ok""#.utf8)

    /// What a scrape exports, from the state the gateway keeps: the MQTT client's statistics, the managed devices
    /// and their state documents, the samples the output mapper counted, and the process's CPU time and memory.
    public func metricsSnapshot() async -> MetricsSnapshot {
        var devices: [MetricsSnapshot.Device] = []
        if let manager {
            for device in await manager.managedDevices {
                let connected = await manager.connectionState(id: device.id) == .connected
                let (document, samples) = outputs.withLock { ($0.document(device.id), $0.sampleCounts(of: device.id)) }
                devices.append(MetricsSnapshot.Device(id: device.id, connected: connected, document: document, samples: samples))
            }
        }
        var snapshot = MetricsSnapshot(mqtt: sink.statistics, devices: devices, cpuSeconds: ProcessStatistics.cpuSeconds,
                                       residentBytes: ProcessMemory.residentBytes, dbusErrors: central?.dbusErrorCounts ?? [:],
                                       frontend: frontend?.statistics)
        snapshot.radiosUp = (radioWatchdog.withLock { $0?.statuses } ?? [:]).mapValues { $0.status.state == .ok }
        return snapshot
    }
}

extension GatewayService {
    /// `GET /metrics`'s body; empty with `metrics.enabled: false`.
    public func metricsExposition() async -> [UInt8] {
        guard let metrics = core.metrics else { return [] }
        return metrics.exposition(after: await core.metricsSnapshot())
    }
}
