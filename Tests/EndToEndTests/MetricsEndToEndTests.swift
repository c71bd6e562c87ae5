import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Wear2MQTTTesting

/// `metrics.enabled: true` on the real gateway: a heart-rate strap streams, Prometheus's own text parser (Python's
/// prometheus_client) reads `GET /metrics`, and the counters agree with what a subscriber saw on the broker.
@Suite
struct MetricsEndToEndTests {
    static let strap = "C0:FF:EE:00:00:21"

    @Test func aScrapeCountsTheSamplesASubscriberSaw() async throws {
        let port = try FreePort.loopback()
        try await Stack.with(scenarioDevices: """
          - kind: heart_rate_strap
            address: \(Self.strap)
            advertising_interval: 100ms
            options: { rate_hz: 5, battery: 77 }
        """, configuredDevices: "  - address: \(Self.strap)\n    name: strap\n", gatewayExtra: """
        metrics:
          enabled: true
          listen: 127.0.0.1:\(port)
        """) { stack in
            // The gateway's log when nothing arrives (once under the full suite: the metrics port, then free for
            // anyone, taken before the gateway's bind; `FreePort.loopback` now keeps it reserved).
            let streamed = await stack.until(timeout: .seconds(45)) { stack.payloads("strap/sensor/heart_rate").count >= 5 }
            #expect(streamed, "\(streamed ? "" : String(stack.gateway.child.errorOutput.suffix(4000)))")
            let seen = stack.payloads("strap/sensor/heart_rate").count
            var families: [String: [Sample]] = [:]
            // The gateway counts a sample before the broker delivers it: a scrape after the subscriber saw `seen`
            // counts at least as many.
            // eventually: the gateway's /metrics page, a scrape of the process over HTTP.
            #expect(await eventually(timeout: .seconds(30)) {
                guard let text = await Self.scrape(port: port) else { return false }
                families = (try? await Self.parse(text)) ?? [:]
                return Self.value(families, "wear2mqtt_samples_published_total", ["device": "strap", "sensor": "heart_rate"]) ?? 0 >= Double(seen)
                    && Self.value(families, "wear2mqtt_device_battery_ratio", ["device": "strap"]) != nil
            })
            // Parsed again outside the wait, so a page the parser refuses fails here with the parser's words.
            families = try await Self.parse(try #require(await Self.scrape(port: port)))
            #expect(Self.value(families, "wear2mqtt_mqtt_connected", [:]) == 1)
            #expect(Self.value(families, "wear2mqtt_devices_managed", [:]) == 1)
            #expect(Self.value(families, "wear2mqtt_devices_connected", [:]) == 1)
            #expect(Self.value(families, "wear2mqtt_device_battery_ratio", ["device": "strap"]) == 0.77)
            #expect((Self.value(families, "wear2mqtt_mqtt_messages_published_total", [:]) ?? 0) >= Double(seen))
            #expect((Self.value(families, "process_resident_memory_bytes", [:]) ?? 0) > 1_000_000)
            #expect((Self.value(families, "process_cpu_seconds_total", [:]) ?? 0) > 0)
            #expect(families["wear2mqtt_build_info"]?.first?.labels["version"] != nil)
            // No Bluetooth address in any label.
            #expect(!families.values.joined().contains { $0.labels.values.contains(Self.strap) })
        }
    }

    struct Sample: Decodable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    static func value(_ families: [String: [Sample]], _ name: String, _ labels: [String: String]) -> Double? {
        families[name]?.first { sample in labels.allSatisfy { sample.labels[$0.key] == $0.value } }?.value
    }

    static func scrape(port: Int) async -> String? {
        guard let (data, response) = try? await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!),
              (response as? HTTPURLResponse)?.statusCode == 200 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Samples by name, parsed by prometheus_client (in `TestTools.python`): a parse error fails the test.
    static func parse(_ text: String) async throws -> [String: [Sample]] {
        let directory = try TemporaryDirectory()
        let input = try directory.write("metrics.txt", text)
        let script = """
        import json, sys
        from prometheus_client.parser import text_string_to_metric_families
        print(json.dumps([{"name": s.name, "labels": s.labels, "value": s.value}
                          for f in text_string_to_metric_families(open(sys.argv[1]).read()) for s in f.samples]))
        """
        let child = try ChildProcess(executable: try TestTools.require(TestTools.python), arguments: ["-c", script, input],
                                     outputPath: directory.file("out"), errorPath: directory.file("err"))
        let status = await child.waitForExit(timeout: .seconds(20))
        try #require(status == 0, "prometheus_client could not parse the page: \(child.errorOutput)")
        let samples = try JSONDecoder().decode([Sample].self, from: Data(child.output.utf8))
        return Dictionary(grouping: samples, by: \.name)
    }
}
