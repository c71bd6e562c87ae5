import Foundation
import Testing
import Wear2MQTTTesting

/// `wear2mqtt-sim proxy` proven faithful the way the BlueZ simulator was with bleak: aioesphomeapi (PyPI), the client
/// Home Assistant itself uses for ESPHome, connects to it without and with encryption, reads its device info (the
/// Bluetooth proxy's feature flags) and its free connection slots; a wrong key is refused as a real proxy refuses it,
/// and a client without a key is told the proxy requires encryption. Serving a scenario, aioesphomeapi hears the
/// heart-rate strap's raw advertisement, connects to it, lists its services, reads the battery, writes the control
/// point, receives Heart Rate Measurement notifications after writing the CCCD itself, and gets its slot back on
/// disconnect, with and without encryption; a proxy of one slot refuses a second device. (esphome_interop.py says
/// what it checks.)
@Suite struct ESPHomeProxyInteropTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("esphome_interop.py").path
    static let key = Data((0..<32).map { UInt8($0 * 5 + 1) }).base64EncodedString()
    static let otherKey = Data([UInt8](repeating: 7, count: 32)).base64EncodedString()

    static let strap = "C0:FF:EE:00:00:01"
    static let thermometer = "C0:FF:EE:00:00:02"
    /// Two devices advertising every 100 ms, the strap measuring at 10 Hz, so a run takes about a second.
    static let scenario = """
        seed: 42
        devices:
          - kind: heart_rate_strap
            address: \(strap)
            name: HRM-Proxy
            rssi: -58
            advertising_interval: 100ms
            options: { rate_hz: 10, battery: 77 }
          - kind: thermometer
            address: \(thermometer)
            advertising_interval: 100ms
        """

    enum Case: String, CaseIterable {
        case plaintext, encrypted, wrongKey, noKey
        /// With the scenario: the strap over the API.
        case strapPlaintext, strapEncrypted
        /// One slot, two devices: the second connect refused.
        case slotsExhausted

        var encrypted: Bool { self != .plaintext && self != .strapPlaintext && self != .slotsExhausted }
        var servesScenario: Bool { self == .strapPlaintext || self == .strapEncrypted || self == .slotsExhausted }
        var slots: Int { self == .slotsExhausted ? 1 : 2 }
    }

    @Test("aioesphomeapi against the simulated proxy", arguments: Case.allCases)
    func aioesphomeapi(_ kind: Case) async throws {
        let directory = try TemporaryDirectory(prefix: "esphome-\(kind.rawValue)")
        defer { directory.remove() }
        let port = try FreePort.loopback()
        let name = "proxy-\(kind.rawValue.lowercased())"
        let encrypted = kind.encrypted
        let scenario = kind.servesScenario ? ["--scenario", try directory.write("scenario.yaml", Self.scenario)] : []
        let proxy = try ChildProcess(executable: SimulatorProcess.executablePath,
                                     arguments: ["proxy", "--port", "\(port)", "--name", name, "--slots", "\(kind.slots)"]
                                         + (encrypted ? ["--key", Self.key] : []) + scenario,
                                     outputPath: directory.file("proxy.out"), errorPath: directory.file("proxy.err"))
        #expect(try await proxy.waitForErrorOutput(timeout: .seconds(60)) { $0.contains("serving ESPHome's API") })
        let arguments: [String] = switch kind {
        case .plaintext: []
        case .encrypted: ["--key", Self.key]
        case .wrongKey: ["--wrong-key", Self.otherKey]
        case .noKey: ["--no-key"]
        case .strapPlaintext: ["--strap", Self.strap]
        case .strapEncrypted: ["--key", Self.key, "--strap", Self.strap]
        case .slotsExhausted: ["--strap", Self.strap, "--other", Self.thermometer]
        }
        let client = try ChildProcess(executable: try TestTools.require(TestTools.python),
                                      arguments: [Self.script, "\(port)", name, "--slots", "\(kind.slots)"] + arguments,
                                      outputPath: directory.file("client.out"), errorPath: directory.file("client.err"))
        let status = await client.waitForExit(timeout: .seconds(90))
        if status == nil { client.signal(SIGKILL) }
        #expect(status == 0, "\(client.output)\(client.errorOutput)\(proxy.errorOutput)")
        #expect(client.output.hasPrefix("PASS"), "\(client.output)\(client.errorOutput)")
        if encrypted, kind != .wrongKey, kind != .noKey { #expect(client.output.contains("encrypted=True")) }
        if kind.servesScenario {
            #expect(client.output.contains("strap=\(Self.strap) name=HRM-Proxy"), "\(client.output)")
            #expect(client.output.contains("battery=77"), "\(client.output)")
            #expect(client.output.contains("free_after=\(kind.slots)/\(kind.slots)"), "\(client.output)")
        }
        if kind == .slotsExhausted { #expect(client.output.contains("other=refused(connected=False,error=0)"), "\(client.output)") }
        #expect(proxy.isRunning, "a refused client took the proxy down: \(proxy.errorOutput)")
        await proxy.stop()
    }
}
