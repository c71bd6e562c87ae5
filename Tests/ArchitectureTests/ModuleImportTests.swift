import Foundation
import Testing

/// docs/architecture.md's rules for what each module may import, checked against every source file: modules follow
/// the data path, drivers reach devices only through `DeviceLink`, and simulated devices and test kits never reach
/// the daemon. A new import that breaks a rule fails here with the file that has it; change the rule (and the
/// document) only with a reason in docs/decisions.md.
@Suite("Module import rules")
struct ModuleImportTests {
    /// What every module may use without a rule: the platform, the standard library's neighbours and logging.
    static let everywhere: Set<String> = ["Foundation", "FoundationEssentials", "Glibc", "Musl", "Darwin", "Synchronization", "Dispatch", "Logging"]

    /// Module → the modules of this package and the dependencies it may import (besides `everywhere`).
    static let allowed: [String: Set<String>] = [
        "CDBus": [],
        "CMosquitto": [],
        "CTLS": [],
        "CYAML": [],
        "CSystemZlib": [],
        "SystemCrypto": ["CTLS"],
        "YAML": ["CYAML"],
        "CEpoll": [],
        "EventLoop": ["CEpoll", "HeapModule"],
        "DBus": ["CDBus", "EventLoop"],
        "BlueZ": ["CEpoll", "DBus", "EventLoop"],
        "MQTT": ["CMosquitto", "CSystemZlib", "EventLoop", "DequeModule"],
        "ESPHome": ["BlueZ", "DBus", "EventLoop", "SystemCrypto", "SwiftProtobuf"],
        "Wearables": ["BlueZ", "DBus", "EventLoop", "SystemCrypto", "SwiftProtobuf"],
        "Firmware": ["Wearables", "BlueZ", "SystemCrypto", "SwiftProtobuf", "CSystemZlib"],
        "Gateway": ["Wearables", "Firmware", "BlueZ", "DBus", "ESPHome", "MQTT", "EventLoop", "YAML", "ServiceLifecycle", "Prometheus", "SystemCrypto",
                    "DequeModule", "OrderedCollections"],
        "MetricsExporter": ["NIOCore", "NIOPosix", "NIOHTTP1", "ServiceLifecycle"],
        "Frontend": ["Gateway", "CTLS", "NIOCore", "NIOPosix", "NIOHTTP1", "NIOWebSocket", "ServiceLifecycle"],
        "wear2mqtt": ["Gateway", "Frontend", "MetricsExporter", "MQTT", "EventLoop", "ArgumentParser", "ServiceLifecycle"],
        "SimulatedWearables": ["EventLoop", "Wearables", "Firmware", "Crypto", "ZIPFoundation"],
        "Simulator": ["BlueZ", "DBus", "ESPHome", "EventLoop", "Wearables", "SimulatedWearables", "YAML"],
        "wear2mqtt-sim": ["Simulator", "SimulatedWearables", "Wearables", "Firmware", "DBus", "ESPHome", "ArgumentParser"],
        "Wear2MQTTTesting": ["EventLoop", "MQTT", "DBus", "BlueZ", "Wearables", "Firmware", "SimulatedWearables", "Simulator", "Gateway",
                             "Testing"],
        "FuzzTargets": ["Wearables", "Firmware", "MQTT", "Gateway", "ESPHome", "DBus", "CDBus"],
        "wear2mqtt-fuzz": ["FuzzTargets"],
        "wear2mqtt-bench": ["Gateway", "Simulator", "BlueZ", "MQTT", "CMosquitto", "DBus", "EventLoop", "Wearables", "SimulatedWearables",
                            "Wear2MQTTTesting", "ArgumentParser", "Histogram",
                            // The floor relay: epoll and recvmmsg, libdbus read directly (FloorRelay).
                            "CEpoll", "CDBus",
                            // A browser's WebSocket on the web interface (BenchBrowsers).
                            "NIOCore", "NIOPosix", "NIOHTTP1", "NIOWebSocket"],
    ]

    /// The modules that make up the daemon: none of them may import what only tests, the simulator and the bench use.
    static let product = ["CDBus", "CMosquitto", "CTLS", "CYAML", "CSystemZlib", "CEpoll", "YAML", "SystemCrypto", "EventLoop", "DBus", "BlueZ", "ESPHome", "MQTT", "Wearables", "Firmware", "Gateway", "MetricsExporter", "Frontend", "wear2mqtt"]
    static let neverInTheProduct: Set<String> = ["SimulatedWearables", "Simulator", "Wear2MQTTTesting", "Testing", "FuzzTargets"]

    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// Every `.swift` file under `Sources/<module>`, with the modules it imports.
    static func imports(of module: String) throws -> [(file: String, modules: Set<String>)] {
        let root = sources.appendingPathComponent(module)
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        var found: [(String, Set<String>)] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            let modules = text.split(separator: "\n").compactMap { line -> String? in
                let words = line.split(separator: " ")
                guard let index = words.firstIndex(of: "import"), words[..<index].allSatisfy({ $0.hasPrefix("@") || $0 == "package" || $0 == "public" }),
                      index + 1 < words.count else { return nil }
                return String(words[index + 1].split(separator: ".").first ?? "")
            }
            found.append((url.path.replacingOccurrences(of: sources.path + "/", with: ""), Set(modules)))
        }
        return found
    }

    @Test("every module in Sources has a rule")
    func everyModuleHasARule() throws {
        let modules = try FileManager.default.contentsOfDirectory(atPath: Self.sources.path).filter { !$0.hasPrefix(".") }
        #expect(Set(modules).subtracting(Self.allowed.keys).isEmpty, "modules without a rule in ModuleImportTests.allowed")
    }

    @Test("each module imports only what its rule allows", arguments: allowed.keys.sorted())
    func importsFollowTheRules(module: String) throws {
        let permitted = Self.allowed[module, default: []].union(Self.everywhere)
        for (file, modules) in try Self.imports(of: module) {
            let extra = modules.subtracting(permitted)
            #expect(extra.isEmpty, "\(file) imports \(extra.sorted()), which \(module) may not")
        }
    }

    @Test("simulated devices, the simulator and the test kits never reach the daemon's modules")
    func theProductLinksNoSimulation() {
        for module in Self.product {
            #expect(Self.allowed[module, default: []].isDisjoint(with: Self.neverInTheProduct), "\(module)")
        }
    }

    /// Full Foundation on Linux brings FoundationInternationalization and ICU's 34 MB data table into the static
    /// binary (docs/decisions.md, "A binary without ICU"); FoundationEssentials has what the daemon uses. Generated
    /// protobuf files import Foundation only where FoundationEssentials does not exist.
    @Test("the daemon's modules import FoundationEssentials, never all of Foundation", arguments: product)
    func theProductLeavesICUOut(module: String) throws {
        let root = Self.sources.appendingPathComponent(module)
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return }
        for case let url as URL in walker where url.pathExtension == "swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            let importsFoundation = text.split(separator: "\n").contains { $0.hasSuffix("import Foundation") }
            #expect(!importsFoundation || text.contains("#if canImport(FoundationEssentials)"),
                    "\(url.lastPathComponent) imports Foundation")
        }
    }

    /// Expects no `.swift` file under `Sources/<module>` to contain any of `names`.
    static func expectNone(of names: [String], in module: String) throws {
        let root = sources.appendingPathComponent(module)
        let walker = try #require(FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil))
        for case let url as URL in walker where url.pathExtension == "swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            for name in names { #expect(!text.contains(name), "\(url.lastPathComponent) names \(name)") }
        }
    }

    @Test("the simulator takes only BluetoothAddress from BlueZ, never the client's model or central")
    func simulatorUsesNoBlueZClient() throws {
        try Self.expectNone(of: ["BlueZClient", "BlueZModel", "BluetoothCentral"], in: "Simulator")
    }

    @Test("drivers reach a device only through DeviceLink, never a BlueZ client")
    func driversUseDeviceLink() throws {
        try Self.expectNone(of: ["BlueZClient"], in: "Wearables")
    }
}
