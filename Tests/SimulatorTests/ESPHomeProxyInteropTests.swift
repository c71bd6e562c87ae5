import Foundation
import Testing
import Wear2MQTTTesting

/// `wear2mqtt-sim proxy` proven faithful the way the BlueZ simulator was with bleak: aioesphomeapi (PyPI), the client
/// Home Assistant itself uses for ESPHome, connects to it without and with encryption, reads its device info (the
/// Bluetooth proxy's feature flags) and its free connection slots; a wrong key is refused as a real proxy refuses it,
/// and a client without a key is told the proxy requires encryption. (esphome_interop.py says what it checks.)
@Suite struct ESPHomeProxyInteropTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("esphome_interop.py").path
    static let key = Data((0..<32).map { UInt8($0 * 5 + 1) }).base64EncodedString()
    static let otherKey = Data([UInt8](repeating: 7, count: 32)).base64EncodedString()

    enum Case: String, CaseIterable {
        case plaintext, encrypted, wrongKey, noKey
    }

    @Test("aioesphomeapi against the simulated proxy", arguments: Case.allCases)
    func aioesphomeapi(_ kind: Case) async throws {
        let directory = try TemporaryDirectory(prefix: "esphome-\(kind.rawValue)")
        defer { directory.remove() }
        let port = try FreePort.loopback()
        let name = "proxy-\(kind.rawValue.lowercased())"
        let encrypted = kind != .plaintext
        let proxy = try ChildProcess(executable: SimulatorProcess.executablePath,
                                     arguments: ["proxy", "--port", "\(port)", "--name", name, "--slots", "2"] + (encrypted ? ["--key", Self.key] : []),
                                     outputPath: directory.file("proxy.out"), errorPath: directory.file("proxy.err"))
        #expect(try await proxy.waitForErrorOutput(timeout: .seconds(60)) { $0.contains("serving ESPHome's API") })
        let arguments: [String] = switch kind {
        case .plaintext: []
        case .encrypted: ["--key", Self.key]
        case .wrongKey: ["--wrong-key", Self.otherKey]
        case .noKey: ["--no-key"]
        }
        let client = try ChildProcess(executable: try TestTools.require(TestTools.python),
                                      arguments: [Self.script, "\(port)", name, "--slots", "2"] + arguments,
                                      outputPath: directory.file("client.out"), errorPath: directory.file("client.err"))
        let status = await client.waitForExit(timeout: .seconds(90))
        if status == nil { client.signal(SIGKILL) }
        #expect(status == 0, "\(client.output)\(client.errorOutput)\(proxy.errorOutput)")
        #expect(client.output.hasPrefix("PASS"), "\(client.output)\(client.errorOutput)")
        if kind == .encrypted { #expect(client.output.contains("encrypted=True")) }
        #expect(proxy.isRunning, "a refused client took the proxy down: \(proxy.errorOutput)")
        await proxy.stop()
    }
}
