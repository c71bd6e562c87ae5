import Foundation
import Testing
import Wearables

/// docs/STYLE.md: "adding a vendor touches that folder and one registration line". A driver's knowledge lives in
/// `Sources/Wearables/<Vendor>/` and reaches everything else through its description (`DriverDescription`), so no
/// daemon source outside the vendor folders may name a driver or one of a family's own commands. The names come from
/// the registered descriptions, so a new driver is checked without touching this test.
@Suite("Driver knowledge stays in the driver's folder")
struct DriverKnowledgeTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// The daemon's modules (the simulator, test kits, bench and fuzz targets name drivers by design).
    static let daemonModules = ["EventLoop", "DBus", "BlueZ", "MQTT", "Wearables", "Firmware", "Gateway", "MetricsExporter", "Frontend", "wear2mqtt"]
    /// Folders of `Sources/Wearables` shared by every driver.
    static let sharedWearablesFolders: Set<String> = ["Driver", "Model", "GATT", "VendorFraming", "HeartRateVariability"]

    /// Literals that spell a family's command but mean something else where they stand, each with the reason.
    static let otherMeanings: [String: Set<String>] = [
        // `device/options` `notify`: the notification method (acquire or start_notify), not InfiniTime's command.
        "Gateway/Contract/BridgeRequest.swift": ["notify"],
        "Gateway/Devices/DeviceStore.swift": ["notify"],
        // A GATT characteristic's `notify` flag.
        "BlueZ/Model/BlueZObjects.swift": ["notify"],
        "Wearables/GATT/BatteryReporting.swift": ["notify"],
    ]

    /// Driver names, and the commands only some families have (not the contract's own, nor the two steps of a pairing
    /// run in the driver, which `PairingMethod` names for every family that pairs so).
    static var forbidden: Set<String> {
        let contract = Set(CommandDescription.contract.map(\.name))
        var names: Set<String> = []
        for driver in WearableDrivers.all.drivers {
            let description = driver.driverDescription
            names.insert(description.name)
            for command in description.commands where !contract.contains(command.name) && command.route != .pairing { names.insert(command.name) }
        }
        return names
    }

    /// Every daemon source file outside the vendor folders, by path under Sources.
    static func neutralFiles() throws -> [String] {
        var files: [String] = []
        for module in daemonModules {
            let root = sources.appendingPathComponent(module)
            guard let walker = FileManager.default.enumerator(atPath: root.path) else { continue }
            for case let path as String in walker where path.hasSuffix(".swift") {
                if module == "Wearables", let folder = path.split(separator: "/").first, path.contains("/"),
                   !sharedWearablesFolders.contains(String(folder)) {
                    continue
                }
                files.append("\(module)/\(path)")
            }
        }
        return files.sorted()
    }

    /// The string literals of code lines (doc comments and comments left out).
    static func literals(in text: String) -> [String] {
        var found: [String] = []
        for line in text.split(separator: "\n") {
            let code = line.trimmingCharacters(in: .whitespaces)
            if code.hasPrefix("//") { continue }
            let parts = code.split(separator: "\"", omittingEmptySubsequences: false)
            for part in parts.enumerated() where part.offset % 2 == 1 { found.append(String(part.element)) }
        }
        return found
    }

    @Test("no daemon source outside the vendor folders names a driver or a family's own command")
    func noDriverLiteralsOutsideTheirFolders() throws {
        let forbidden = Self.forbidden
        #expect(forbidden.contains("polar") && forbidden.contains("recording") && forbidden.contains("standard"))
        var offenders: [String] = []
        for file in try Self.neutralFiles() {
            let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
            let allowed = Self.otherMeanings[file] ?? []
            for literal in Set(Self.literals(in: text)) where forbidden.contains(literal) && !allowed.contains(literal) {
                offenders.append("\(file): \"\(literal)\"")
            }
        }
        #expect(offenders.isEmpty, "driver knowledge outside the driver's folder: \(offenders.sorted())")
    }

    @Test("no daemon source outside the vendor folders names a driver's type")
    func noDriverTypesOutsideTheirFolders() throws {
        let types = WearableDrivers.all.drivers.map { String(describing: $0) }
        var offenders: [String] = []
        for file in try Self.neutralFiles() where !file.hasSuffix("Driver/DriverRegistry.swift") {
            let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
            for type in types where text.contains(type + ".") || text.contains(type + "(") { offenders.append("\(file): \(type)") }
        }
        #expect(offenders.isEmpty, "a driver's type outside its folder (only the registration line may name it): \(offenders)")
    }
}
