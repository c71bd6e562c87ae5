import Gateway
import MQTT
import Prometheus
import Testing
import Wearables

/// The names, labels and values of docs/metrics.md, read back from a registry of the test's own.
@Suite("Gateway metrics")
struct GatewayMetricsTests {
    func snapshot(published: UInt64 = 10, samples: UInt64 = 7, devices: [String] = ["strap"]) -> MetricsSnapshot {
        var mqtt = MQTTClientStatistics()
        mqtt.connected = true
        mqtt.connections = 3
        mqtt.published = published
        mqtt.offlineDropped = 2
        mqtt.incomingDropped = 6
        mqtt.spoolBytes = 4096
        mqtt.spoolFailures = 7
        mqtt.spoolPending = 5
        return MetricsSnapshot(mqtt: mqtt, devices: devices.map {
            MetricsSnapshot.Device(id: $0, connected: true, rssi: -61, batteryPercent: 77, firmwareUpdateProgress: 0.5,
                                   samples: [.heartRate: samples])
        }, cpuSeconds: 1.5, residentBytes: 12_345_678)
    }

    /// `name{labels} value` lines of the page, comments left out.
    func lines(_ metrics: GatewayMetrics, _ snapshot: MetricsSnapshot) -> Set<String> {
        Set(String(decoding: metrics.exposition(after: snapshot), as: UTF8.self).split(separator: "\n")
            .filter { !$0.hasPrefix("#") }.map(String.init))
    }

    @Test("a scrape exports the client's statistics, the devices and the process in base units")
    func namesAndValues() {
        let page = lines(GatewayMetrics(registry: PrometheusCollectorRegistry()), snapshot())
        for line in [
            #"wear2mqtt_samples_published_total{device="strap",sensor="heart_rate"} 7"#,
            "wear2mqtt_mqtt_messages_published_total 10", "wear2mqtt_mqtt_messages_dropped_total 2",
            "wear2mqtt_mqtt_incoming_dropped_total 6",
            "wear2mqtt_mqtt_reconnects_total 2", "wear2mqtt_mqtt_connected 1.0",
            "wear2mqtt_spool_bytes 4096.0", "wear2mqtt_spool_write_failures_total 7", "wear2mqtt_spool_pending_records 5.0",
            "wear2mqtt_devices_managed 1.0", "wear2mqtt_devices_connected 1.0",
            #"wear2mqtt_device_rssi_dbm{device="strap"} -61.0"#, #"wear2mqtt_device_battery_ratio{device="strap"} 0.77"#,
            #"wear2mqtt_device_firmware_update_progress_ratio{device="strap"} 0.5"#,
            "process_cpu_seconds_total 1.5", "process_resident_memory_bytes 12345678.0",
            #"wear2mqtt_build_info{version="\#(Wear2MQTTVersion.current)"} 1.0"#,
        ] {
            #expect(page.contains(line), "\(line) in \(page.sorted())")
        }
    }

    @Test("counters follow the gateway's totals across scrapes, and a removed device takes its series along")
    func countersGrowAndDevicesLeave() {
        let metrics = GatewayMetrics(registry: PrometheusCollectorRegistry())
        _ = metrics.exposition(after: snapshot(published: 10, samples: 7))
        let second = lines(metrics, snapshot(published: 25, samples: 9))
        #expect(second.contains(#"wear2mqtt_samples_published_total{device="strap",sensor="heart_rate"} 9"#))
        #expect(second.contains("wear2mqtt_mqtt_messages_published_total 25"))
        let gone = lines(metrics, snapshot(published: 25, devices: []))
        #expect(!gone.contains { $0.contains("strap") }, "\(gone.sorted())")
        #expect(gone.contains("wear2mqtt_devices_managed 0.0"))
    }

    @Test("the web interface's browsers now, and the messages dropped for slow ones as a counter that follows the feed's total")
    func frontend() {
        let metrics = GatewayMetrics(registry: PrometheusCollectorRegistry())
        #expect(!lines(metrics, snapshot()).contains { $0.hasPrefix("wear2mqtt_frontend_dropped") && !$0.hasSuffix(" 0") },
                "without the web interface nothing is dropped")
        var first = snapshot()
        first.frontend = (browsers: 2, dropped: 40)
        let page = lines(metrics, first)
        #expect(page.contains("wear2mqtt_frontend_browsers 2.0"), "\(page.sorted())")
        #expect(page.contains("wear2mqtt_frontend_dropped_messages_total 40"))
        var second = snapshot()
        second.frontend = (browsers: 0, dropped: 55)
        let later = lines(metrics, second)
        #expect(later.contains("wear2mqtt_frontend_browsers 0.0") && later.contains("wear2mqtt_frontend_dropped_messages_total 55"))
    }

    @Test("failed BlueZ calls are counted by D-Bus error name, and the count follows the client's total")
    func dbusErrors() {
        let metrics = GatewayMetrics(registry: PrometheusCollectorRegistry())
        var first = snapshot()
        first.dbusErrors = ["org.bluez.Error.NotPermitted": 2, "timeout": 1]
        let page = lines(metrics, first)
        #expect(page.contains(#"wear2mqtt_dbus_errors_total{name="org.bluez.Error.NotPermitted"} 2"#), "\(page.sorted())")
        #expect(page.contains(#"wear2mqtt_dbus_errors_total{name="timeout"} 1"#))
        var second = snapshot()
        second.dbusErrors = ["org.bluez.Error.NotPermitted": 5, "timeout": 1]
        #expect(lines(metrics, second).contains(#"wear2mqtt_dbus_errors_total{name="org.bluez.Error.NotPermitted"} 5"#))
    }

    @Test("command durations are labelled with the contract's names and ok or error; any other name is other")
    func commandLabels() throws {
        let metrics = GatewayMetrics(registry: PrometheusCollectorRegistry())
        let known = ContractRequest(target: .device(id: "strap", command: "find"), payload: Array("{}".utf8), layout: TopicLayout(base: "w"))
        let bridge = ContractRequest(target: .bridge(name: "health_check"), payload: Array("{}".utf8), layout: TopicLayout(base: "w"))
        let unknown = ContractRequest(target: .device(id: "strap", command: "x\(UInt64.random(in: 0...UInt64.max))"),
                                      payload: Array("{}".utf8), layout: TopicLayout(base: "w"))
        metrics.recordCommand(known, ok: true, duration: .milliseconds(30))
        metrics.recordCommand(bridge, ok: false, duration: .milliseconds(3))
        metrics.recordCommand(unknown, ok: false, duration: .milliseconds(3))
        let page = lines(metrics, snapshot())
        #expect(page.contains(#"wear2mqtt_command_duration_seconds_count{command="find",status="ok"} 1"#), "\(page.sorted())")
        #expect(page.contains(#"wear2mqtt_command_duration_seconds_bucket{command="find",status="ok",le="0.05"} 1"#))
        #expect(page.contains(#"wear2mqtt_command_duration_seconds_count{command="bridge/health_check",status="error"} 1"#))
        #expect(page.contains(#"wear2mqtt_command_duration_seconds_count{command="other",status="error"} 1"#))
    }
}
