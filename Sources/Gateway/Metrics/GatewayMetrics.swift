import Prometheus
import Synchronization
import Wearables

/// The gateway's Prometheus metrics (docs/metrics.md) on a swift-prometheus registry.
///
/// Most values are facts the gateway keeps anyway (the MQTT client's statistics, the device list, the state
/// documents, the samples the output mapper counts); they are copied in by `update(_:)` when someone scrapes, so the
/// data path does no work for metrics. Only command durations are recorded as they happen (`recordCommand`), and
/// commands are rare. Device labels come from the managed devices only — never a Bluetooth address — and a device
/// that leaves the list takes its series with it.
///
/// It does not serve HTTP (`MetricsExporter` does) and does not read the process's figures (`ProcessStatistics`).
public final class GatewayMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let known: Set<String>
    private let series = Mutex(Series())

    /// Counters are monotonic in Prometheus but our sources are totals: each scrape adds what grew since the last.
    private struct Series {
        var samples: [SeriesKey: (counter: Counter, exported: UInt64)] = [:]
        var deviceGauges: [String: [Gauge]] = [:]
        var published: UInt64 = 0
        var dropped: UInt64 = 0
        var incomingDropped: UInt64 = 0
        var incomingOversized: UInt64 = 0
        var frontendDropped: UInt64 = 0
        var spoolFailures: UInt64 = 0
        var connections: UInt64 = 0
        var cpuSeconds: Double = 0
        var dbusErrors: [String: (counter: Counter, exported: UInt64)] = [:]
    }

    private struct SeriesKey: Hashable {
        var device: String
        var sensor: SensorKind
    }

    private let published: Counter
    private let dropped: Counter
    private let incomingDropped: Counter
    private let incomingOversized: Counter
    private let frontendDropped: Counter
    private let frontendBrowsers: Gauge
    private let spoolFailures: Counter
    private let reconnects: Counter
    private let connected: Gauge
    private let spoolBytes: Gauge
    private let spoolPending: Gauge
    private let devicesManaged: Gauge
    private let devicesConnected: Gauge
    private let cpuSeconds: Counter
    private let residentBytes: Gauge

    /// Seconds; a command is anything from a 10 ms read to a minutes-long firmware update.
    static let commandBuckets: [Duration] = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300].map { .milliseconds(Int64($0 * 1000)) }

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), drivers: DriverRegistry = WearableDrivers.all) {
        self.registry = registry
        known = Set(BridgeRequest.names.map { "bridge/" + $0 })
            .union(drivers.drivers.flatMap { $0.commands })
        registry.makeGauge(descriptor: .named("wear2mqtt_build_info", "wear2mqtt's version; always 1"), labels: [("version", Wear2MQTTVersion.current)]).set(to: 1)
        published = registry.makeCounter(descriptor: .named("wear2mqtt_mqtt_messages_published_total", "Messages handed to the MQTT client"))
        dropped = registry.makeCounter(descriptor: .named("wear2mqtt_mqtt_messages_dropped_total", "Messages dropped from the offline ring while the broker was away"))
        incomingDropped = registry.makeCounter(descriptor: .named("wear2mqtt_mqtt_incoming_dropped_total", "Incoming messages (requests) dropped because the gateway's buffer was full"))
        incomingOversized = registry.makeCounter(descriptor: .named("wear2mqtt_mqtt_incoming_oversized_total", "Incoming messages whose payload was too large to keep (answered INVALID_PAYLOAD)"))
        spoolFailures = registry.makeCounter(descriptor: .named("wear2mqtt_spool_write_failures_total", "Durable messages the spool could not store (full, or a full disk)"))
        reconnects = registry.makeCounter(descriptor: .named("wear2mqtt_mqtt_reconnects_total", "Connections to the broker after the first"))
        frontendBrowsers = registry.makeGauge(descriptor: .named("wear2mqtt_frontend_browsers", "Browsers with the web interface open now"))
        frontendDropped = registry.makeCounter(descriptor: .named("wear2mqtt_frontend_dropped_messages_total", "Messages dropped for browsers that did not keep up (their queues are bounded)"))
        connected = registry.makeGauge(descriptor: .named("wear2mqtt_mqtt_connected", "1 while the broker is connected"))
        spoolBytes = registry.makeGauge(descriptor: .named("wear2mqtt_spool_bytes", "Bytes in the durable spool"))
        spoolPending = registry.makeGauge(descriptor: .named("wear2mqtt_spool_pending_records", "Durable records waiting for the broker"))
        devicesManaged = registry.makeGauge(descriptor: .named("wear2mqtt_devices_managed", "Devices the gateway manages"))
        devicesConnected = registry.makeGauge(descriptor: .named("wear2mqtt_devices_connected", "Managed devices connected now"))
        cpuSeconds = registry.makeCounter(descriptor: .named("process_cpu_seconds_total", "User and system CPU time"))
        residentBytes = registry.makeGauge(descriptor: .named("process_resident_memory_bytes", "Resident memory size"))
    }

    /// The `command` label: a name of the contract, else `other` (a topic can carry any name, a label set must not).
    func commandLabel(_ request: ContractRequest) -> String {
        let name = switch request.target {
        case .bridge(let name): "bridge/" + name
        case .device(_, let command): command
        }
        return known.contains(name) ? name : "other"
    }

    /// One answered request: its name, `ok` or `error`, and how long the answer took.
    public func recordCommand(_ request: ContractRequest, ok: Bool, duration: Duration) {
        registry.makeDurationHistogram(
            descriptor: .named("wear2mqtt_command_duration_seconds", "Time from a request's arrival to its answer"),
            labels: [("command", commandLabel(request)), ("status", ok ? "ok" : "error")], buckets: Self.commandBuckets
        ).record(duration)
    }

    /// A step the radio watchdog took (docs/radios.md): rare, so counted as it happens. Radio labels are the
    /// configured proxies' names and the adapters' ids: a small, fixed set.
    public func recordRadioStep(radio: String, step: String) {
        registry.makeCounter(descriptor: .named("wear2mqtt_radio_steps_total", "Steps the radio watchdog took to bring a radio back"),
                             labels: [("radio", radio), ("step", step)]).increment()
    }

    /// Copies a scrape's facts into the registry.
    public func update(_ snapshot: MetricsSnapshot) {
        series.withLock { series in
            Self.grow(published, from: &series.published, to: snapshot.mqtt.published)
            Self.grow(dropped, from: &series.dropped, to: snapshot.mqtt.offlineDropped)
            Self.grow(incomingDropped, from: &series.incomingDropped, to: snapshot.mqtt.incomingDropped)
            Self.grow(incomingOversized, from: &series.incomingOversized, to: snapshot.mqtt.incomingOversized)
            if let frontend = snapshot.frontend {
                Self.grow(frontendDropped, from: &series.frontendDropped, to: UInt64(max(0, frontend.dropped)))
                frontendBrowsers.set(to: Double(frontend.browsers))
            }
            Self.grow(spoolFailures, from: &series.spoolFailures, to: snapshot.mqtt.spoolFailures)
            // The first connection is not a reconnect.
            Self.grow(reconnects, from: &series.connections, to: max(series.connections, snapshot.mqtt.connections &- 1))
            if let cpu = snapshot.cpuSeconds, cpu > series.cpuSeconds {
                cpuSeconds.increment(by: cpu - series.cpuSeconds)
                series.cpuSeconds = cpu
            }
            connected.set(to: snapshot.mqtt.connected ? 1 : 0)
            spoolBytes.set(to: Double(snapshot.mqtt.spoolBytes))
            spoolPending.set(to: Double(snapshot.mqtt.spoolPending))
            devicesManaged.set(to: Double(snapshot.devices.count))
            devicesConnected.set(to: Double(snapshot.devices.count(where: \.connected)))
            if let resident = snapshot.residentBytes { residentBytes.set(to: Double(resident)) }
            for (radio, up) in snapshot.radiosUp {
                registry.makeGauge(descriptor: .named("wear2mqtt_radio_up", "1 while the radio works; 0 while it is stalled, recovering, failed or gone"),
                                   labels: [("radio", radio)]).set(to: up ? 1 : 0)
            }
            updateDevices(snapshot.devices, &series)
            for (name, total) in snapshot.dbusErrors {
                var entry = series.dbusErrors[name] ?? (registry.makeCounter(
                    descriptor: .named("wear2mqtt_dbus_errors_total", "Failed calls to BlueZ, by D-Bus error name"),
                    labels: [("name", name)]), 0)
                Self.grow(entry.counter, from: &entry.exported, to: total)
                series.dbusErrors[name] = entry
            }
        }
    }

    private func updateDevices(_ devices: [MetricsSnapshot.Device], _ series: inout Series) {
        let ids = Set(devices.map(\.id))
        for (key, entry) in series.samples where !ids.contains(key.device) {
            registry.unregisterCounter(entry.counter)
            series.samples[key] = nil
        }
        for (id, gauges) in series.deviceGauges where !ids.contains(id) {
            gauges.forEach(registry.unregisterGauge)
            series.deviceGauges[id] = nil
        }
        for device in devices {
            for (sensor, total) in device.samples {
                let key = SeriesKey(device: device.id, sensor: sensor)
                var entry = series.samples[key] ?? (registry.makeCounter(
                    descriptor: .named("wear2mqtt_samples_published_total", "Sensor samples published, by device and sensor"), labels: [("device", device.id), ("sensor", sensor.rawValue)]), 0)
                Self.grow(entry.counter, from: &entry.exported, to: total)
                series.samples[key] = entry
            }
            // Gauges of a device are made again each scrape (the registry returns the existing one) and the absent
            // ones unregistered, so a value the device stopped reporting does not linger.
            var gauges: [Gauge] = []
            func gauge(_ name: String, _ help: String, _ value: Double?) {
                let made = registry.makeGauge(descriptor: .named(name, help), labels: [("device", device.id)])
                if let value {
                    made.set(to: value)
                    gauges.append(made)
                } else {
                    registry.unregisterGauge(made)
                }
            }
            gauge("wear2mqtt_device_connected", "1 while the device is connected", device.connected ? 1 : 0)
            gauge("wear2mqtt_device_rssi_dbm", "Signal strength BlueZ last reported", device.rssi)
            gauge("wear2mqtt_device_battery_ratio", "Battery level the device reports, 0-1", device.batteryPercent.map { $0 / 100 })
            gauge("wear2mqtt_device_firmware_update_progress_ratio", "A running firmware update's progress, 0-1",
                  device.firmwareUpdateProgress)
            series.deviceGauges[device.id] = gauges
        }
    }

    private static func grow(_ counter: Counter, from exported: inout UInt64, to total: UInt64) {
        // A total that went down (a device removed and added again) starts a new baseline.
        if total > exported { counter.increment(by: Int64(clamping: total - exported)) }
        exported = total
    }

    /// The text exposition format, for `GET /metrics`.
    public func exposition(after snapshot: MetricsSnapshot) -> [UInt8] {
        update(snapshot)
        return registry.emitToBuffer()
    }
}

extension MetricNameDescriptor {
    /// A full Prometheus name as docs/metrics.md lists it, with its help; the unit is part of the name.
    static func named(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }
}
