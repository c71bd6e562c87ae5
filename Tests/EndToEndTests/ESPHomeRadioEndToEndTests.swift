import Foundation
import Testing
import Wear2MQTTTesting

/// The built gateway with an ESPHome Bluetooth proxy as a second radio (`radios:`): a heart-rate strap that only the
/// simulated proxy hears streams to MQTT through it, with the standard driver unchanged, while a thermometer the local
/// (simulated BlueZ) adapter hears streams through BlueZ — both in the same gateway, over an encrypted API.
@Suite struct ESPHomeRadioEndToEndTests {
    static let strap = "C0:FF:EE:00:00:61"
    static let thermometer = "C0:FF:EE:00:00:62"

    @Test func aStrapOnlyTheProxyHearsStreamsThroughIt() async throws {
        let directory = try TemporaryDirectory(prefix: "esphome-radio")
        defer { directory.remove() }
        let port = try FreePort.loopback()
        let key = Data((0..<32).map { UInt8(255 - $0) }).base64EncodedString()
        let executable = URL(fileURLWithPath: GatewayProcess.executablePath).deletingLastPathComponent().appendingPathComponent("wear2mqtt-sim").path
        let scenario = try directory.write("proxy.yaml", """
            seed: 3
            devices:
              - kind: heart_rate_strap
                address: \(Self.strap)
                advertising_interval: 100ms
                options: { rate_hz: 5, battery: 66 }
            """)
        let proxy = try ChildProcess(executable: executable,
                                     arguments: ["proxy", "--port", "\(port)", "--name", "kitchen", "--key", key, "--scenario", scenario],
                                     outputPath: directory.file("proxy.out"), errorPath: directory.file("proxy.err"))
        #expect(try await proxy.waitForErrorOutput(timeout: .seconds(60)) { $0.contains("serving ESPHome's API") })
        try await Stack.with(scenarioDevices: """
          - kind: thermometer
            address: \(Self.thermometer)
            advertising_interval: 100ms
        """, configuredDevices: "  - address: \(Self.strap)\n    name: strap\n  - address: \(Self.thermometer)\n    name: thermo\n",
                             gatewayExtra: """
        radios:
          - name: kitchen
            host: 127.0.0.1
            port: \(port)
            key: "\(key)"
        """) { stack in
            #expect(await stack.until(timeout: .seconds(60)) { stack.payloads("strap/sensor/heart_rate").count >= 5 },
                    "\(proxy.errorOutput)")
            #expect(await stack.until(timeout: .seconds(60)) { !stack.payloads("thermo/sensor/temperature").isEmpty },
                    "\(stack.payloads("thermo")); gateway log: \(stack.gateway.child.errorOutput.suffix(4000))")
            #expect(stack.payloads("strap").last?.contains("\"battery\":66") == true, "\(stack.payloads("strap"))")
            // Each device's state names the radio that holds it.
            #expect(stack.payloads("strap").last?.contains("\"radio\":\"kitchen\"") == true, "\(stack.payloads("strap").last ?? "")")
            #expect(await stack.until(timeout: .seconds(30)) { stack.payloads("thermo").last?.contains("\"radio\":\"hci0\"") == true })
            // So does bridge/devices, and bridge/info lists the proxy beside the adapter, both watched.
            func radios() -> [String: String] {
                let entries = stack.payloads("bridge/devices").last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) } as? [[String: Any]]
                return Dictionary((entries ?? []).compactMap { entry in (entry["radio"] as? String).map { (entry["id"] as? String ?? "", $0) } }) { $1 }
            }
            #expect(await stack.until(timeout: .seconds(30)) { radios() == ["strap": "kitchen", "thermo": "hci0"] }, "\(radios())")
            func states() -> [String: String] {
                let adapters = stack.last("bridge/info")?["adapters"] as? [[String: Any]] ?? []
                return Dictionary(adapters.map { ($0["id"] as? String ?? "", "\($0["kind"] ?? "-") \($0["state"] ?? "-")") }) { $1 }
            }
            #expect(await stack.until(timeout: .seconds(30)) { states() == ["hci0": "adapter ok", "kitchen": "esphome ok"] }, "\(states())")
        }
        #expect(proxy.isRunning)
        await proxy.stop()
    }
}
