#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Simulator
import Wear2MQTTTesting

/// How a run's heart-rate sensors reach the gateway when they go through ESPHome Bluetooth proxies (`--profile
/// radios`): how many proxies, the connection slots of each, and whether their API is Noise-encrypted.
struct ProxyRadios: Sendable, Codable, Equatable {
    var count: Int
    /// What an ESP32 holds by default.
    var slots = 3
    var encrypted: Bool

    var summary: String {
        "\(count) prox\(count == 1 ? "y" : "ies")" + (encrypted ? " noise" : "")
    }

    /// Which sensors proxy `index` hears: consecutive ranges, `slots` sensors each at most, so every proxy has a
    /// slot for each of its sensors and no sensor is heard by two.
    func straps(of index: Int, total: Int) -> Range<Int> {
        let share = (total + count - 1) / count
        let start = min(total, index * share)
        return start..<min(total, start + min(share, slots))
    }
}

/// The simulated proxies of one run, served from this process (`SimulatedProxyServer`, what `wear2mqtt-sim proxy`
/// serves): each on its own loopback port and event loop thread, hearing its share of the run's sequenced heart-rate
/// sensors, so the send ledger, the loss count and the latency work as for the local adapter's simulator, which also
/// runs in this process. The gateway reaches them over TCP with ESPHome's framing, as it would an ESP32 over WiFi.
///
/// Their CPU is this process's, not the gateway's: `loopThreads` reads it from their event loops' threads.
final class BenchProxies: Sendable {
    /// The kernel name of each proxy's event loop thread (`SimulatedProxyServer`'s `EventLoop`).
    static let threadName = "esphome-proxy"

    struct Entry: Sendable {
        let name: String
        let port: Int
        /// The base64 of the 32-byte key, or nil for plaintext.
        let key: String?
        let server: SimulatedProxyServer
    }

    let entries: [Entry]

    /// Starts `radios.count` proxies, proxy `k` hearing the sensors `radios.straps(of: k, …)` of `workload`.
    init(_ radios: ProxyRadios, workload: Workload, ledger: SendLedger) throws {
        var entries: [Entry] = []
        do {
            for index in 0..<radios.count {
                let port = try FreePort.loopback()
                var settings = SimulatedProxyServer.Settings(port: port)
                settings.name = "bench-proxy-\(index)"
                settings.macAddress = String(format: "AA:BB:CC:00:42:%02X", index)
                settings.slots = radios.slots
                var key: String?
                if radios.encrypted {
                    let bytes = (0..<32).map { _ in UInt8.random(in: 0...255) }
                    settings.key = bytes
                    key = Data(bytes).base64EncodedString()
                }
                var scenario = Scenario(seed: 1)
                scenario.devices = workload.strapDevices(radios.straps(of: index, total: workload.straps), ledger: ledger)
                settings.scenario = scenario
                let server = try SimulatedProxyServer(settings)
                server.start()
                entries.append(Entry(name: settings.name, port: port, key: key, server: server))
            }
        } catch {
            for entry in entries { entry.server.stop() }
            throw BenchError("a simulated proxy did not start: \(error)")
        }
        self.entries = entries
    }

    /// The gateway's `radios:` section.
    var configuration: [String] {
        ["radios:"] + entries.map { entry in
            "  - {name: \(entry.name), host: 127.0.0.1, port: \(entry.port)" + (entry.key.map { ", key: \"\($0)\"" } ?? "") + "}"
        }
    }

    func stop() {
        for entry in entries { entry.server.stop() }
    }

    /// The proxies' event loop threads in this process (every sample's protobuf frame, its encryption and its TCP
    /// write happen there).
    static func loopThreads() -> ThreadCounters {
        ThreadCounters.read(pid: getpid(), named: threadName)
    }
}
