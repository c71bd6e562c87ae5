import BlueZ
import Foundation
import Wearables
import YAML
import SimulatedWearables

/// Turns a scenario YAML document into a `Scenario`, checking every key, type and range and building each
/// device once so that its kind-specific options are checked too. The first problem found is reported with its
/// key path and line (see `docs/simulator.md` for the format).
public enum ScenarioLoader {
    public static func load(contentsOf path: String) throws(ScenarioError) -> Scenario {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ScenarioError(key: "", reason: "cannot read \(path): \(error.localizedDescription)")
        }
        return try load(yaml: text)
    }

    public static func load(yaml: String) throws(ScenarioError) -> Scenario {
        let root: YAMLNode
        do {
            guard let node = try YAMLComposer.compose(yaml) else { return Scenario() }
            root = node
        } catch {
            throw ScenarioError(key: "", reason: "not valid YAML: \(error)")
        }
        var top = try YAMLMappingReader(root, path: "")
        let seed = UInt64(try top.int("seed", in: 0...Int.max) ?? 1)
        let adapter = try adapterSettings(top.node("adapter"))
        var devices: [DeviceSettings] = []
        var companions: [CompanionPlacement] = []
        let deviceNodes = try top.sequence("devices")
        for (index, node) in deviceNodes.enumerated() {
            let (device, companion) = try deviceSettings(node, path: "devices[\(index)]", seed: seed)
            if devices.contains(where: { $0.address == device.address }) {
                throw ScenarioError(key: "devices[\(index)].address", reason: "\(device.address) is used by another device",
                                    line: node.mark?.line)
            }
            devices.append(device)
            if let companion {
                companions.append(CompanionPlacement(host: index, hostAddress: device.address, offset: companion.addressOffset,
                                                     kind: companion.kind))
            }
        }
        if let clash = CompanionPlacement.firstClash(companions, devices: devices.map(\.address)) {
            let index = clash.device ?? clash.placement.host
            throw ScenarioError(key: "devices[\(index)].address", reason: CompanionPlacement.reason(clash.placement, takes: clash.device),
                                line: deviceNodes[index].mark?.line)
        }
        var timeline: [TimedAction] = []
        for (index, node) in try top.sequence("faults").enumerated() {
            timeline.append(try timedAction(node, path: "faults[\(index)]",
                                            addresses: devices.map(\.address) + companions.map(\.address)))
        }
        try top.rejectUnknownKeys()
        return Scenario(seed: seed, adapter: adapter, devices: devices, timeline: timeline)
    }

    private static func address(_ reader: inout YAMLMappingReader, _ key: String) throws(ScenarioError) -> BluetoothAddress? {
        guard let text = try reader.text(key) else { return nil }
        guard let address = BluetoothAddress.colonSeparated(text) else {
            throw reader.error(key, "\"\(text)\" is not a Bluetooth address like AA:BB:CC:DD:EE:FF", nil)
        }
        return address
    }

    private static func adapterSettings(_ node: YAMLNode?) throws(ScenarioError) -> AdapterSettings {
        var settings = AdapterSettings()
        guard let node else { return settings }
        var reader = try YAMLMappingReader(node, path: "adapter")
        if let address = try address(&reader, "address") { settings.address = address }
        if let name = try reader.string("name") { settings.name = name }
        if let powered = try reader.bool("powered") { settings.powered = powered }
        if let cache = try reader.string("gatt_cache", allowed: GATTCachePolicy.allCases.map(\.rawValue)),
           let policy = GATTCachePolicy(rawValue: cache) {
            settings.gattCache = policy
        }
        if let timer = try reader.duration("disconnect_timer", in: .zero ... .seconds(60)) { settings.disconnectTimer = timer }
        if let timeout = try reader.duration("temporary_timeout", in: .zero ... .seconds(3600)) { settings.temporaryTimeout = timeout }
        if let timeout = try reader.duration("connect_timeout", in: .milliseconds(1) ... .seconds(300)) { settings.connectTimeout = timeout }
        if let slots = try reader.int("max_connections", in: 1...64) { settings.maxConnections = slots }
        try reader.rejectUnknownKeys()
        return settings
    }

    /// The device, and its peripheral's companion if it has one.
    private static func deviceSettings(_ node: YAMLNode, path: String, seed: UInt64)
        throws(ScenarioError) -> (DeviceSettings, SimulatedCompanion?)
    {
        var reader = try YAMLMappingReader(node, path: path)
        let kindNode = try reader.required("kind")
        let kindName = try reader.string("kind") ?? ""
        guard let kind = SimulatedDeviceCatalog.kind(named: kindName) else {
            let known = SimulatedDeviceCatalog.kinds.map(\.name).joined(separator: ", ")
            throw reader.error("kind", "unknown kind \"\(kindName)\" (known: \(known))", kindNode)
        }
        _ = try reader.required("address")
        guard let address = try address(&reader, "address") else { throw reader.error("address", "is required", nil) }
        var device = DeviceSettings(kind: kind, address: address)
        if let type = try reader.string("address_type", allowed: ["public", "random"]) { device.addressType = type }
        device.name = try reader.string("name")
        device.rssi = try reader.int("rssi", in: -127...20)
        device.txPower = try reader.int("tx_power", in: -127...20)
        if let advertising = try reader.bool("advertising") { device.advertising = advertising }
        if let interval = try reader.duration("advertising_interval", in: .milliseconds(20) ... .seconds(60)) {
            device.advertisingInterval = interval
        }
        if let delay = try reader.duration("connect_delay", in: .zero ... .seconds(30)) { device.connectDelay = delay }
        if let time = try reader.duration("service_discovery_time", in: .zero ... .seconds(30)) { device.serviceDiscoveryTime = time }
        if let time = try reader.duration("att_round_trip", in: .zero ... .seconds(5)) { device.attRoundTrip = time }
        if let mtu = try reader.int("mtu", in: 23...517) { device.mtu = mtu }
        if let paired = try reader.bool("paired") { device.paired = paired }
        if let trusted = try reader.bool("trusted") { device.trusted = trusted }
        if let pairingNode = reader.node("pairing") {
            var pairing = try YAMLMappingReader(pairingNode, path: reader.keyPath("pairing"))
            if let method = try pairing.string("method", allowed: PairingMethodSetting.allCases.map(\.rawValue)),
               let setting = PairingMethodSetting(rawValue: method) {
                device.pairing = setting
            }
            if let passkey = try pairing.int("passkey", in: 0...999_999) { device.passkey = UInt32(passkey) }
            try pairing.rejectUnknownKeys()
        }
        if let entries = try reader.entries("manufacturer_data") {
            var data: [UInt16: [UInt8]] = [:]
            for (key, value) in entries {
                let keyPath = reader.keyPath("manufacturer_data") + "." + key
                guard let company = parseCompany(key) else {
                    throw ScenarioError(key: keyPath, reason: "company identifiers are numbers 0…65535 (0x004C)", line: value.mark?.line)
                }
                data[company] = try bytes(value, keyPath: keyPath)
            }
            device.manufacturerData = data
        }
        if let entries = try reader.entries("service_data") {
            var data: [BluetoothUUID: [UInt8]] = [:]
            for (key, value) in entries {
                let keyPath = reader.keyPath("service_data") + "." + key
                guard let uuid = BluetoothUUID(string: key) else {
                    throw ScenarioError(key: keyPath, reason: "\"\(key)\" is not a UUID", line: value.mark?.line)
                }
                data[uuid] = try bytes(value, keyPath: keyPath)
            }
            device.serviceData = data
        }
        if let entries = try reader.entries("options") {
            for (key, value) in entries {
                device.options[key] = try optionValue(value, keyPath: reader.keyPath("options") + "." + key)
            }
        }
        try reader.rejectUnknownKeys()
        do {
            return (device, try kind.make(device.configuration(scenarioSeed: seed)).companion)
        } catch {
            let optionNode = try? reader.entries("options")?.first { $0.key == error.key }?.value
            throw ScenarioError(key: reader.keyPath("options") + "." + error.key,
                                reason: error.description.dropPrefix(error.key + ": "), line: optionNode?.mark?.line ?? node.mark?.line)
        }
    }

    private static func parseCompany(_ text: String) -> UInt16? {
        if text.lowercased().hasPrefix("0x") { return UInt16(text.dropFirst(2), radix: 16) }
        return UInt16(text)
    }

    /// Hex bytes: `"01 02 ff"`, `"0102ff"` or `"01:02:ff"`.
    private static func bytes(_ node: YAMLNode, keyPath: String) throws(ScenarioError) -> [UInt8] {
        guard case .scalar(let scalar) = node else {
            throw ScenarioError(key: keyPath, reason: "expected hex bytes such as \"01 02 ff\"", line: node.mark?.line)
        }
        let digits = scalar.string.filter { $0 != " " && $0 != ":" }
        guard digits.count % 2 == 0 else {
            throw ScenarioError(key: keyPath, reason: "hex bytes need an even number of digits", line: node.mark?.line)
        }
        var result: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else {
                throw ScenarioError(key: keyPath, reason: "\"\(digits[index..<next])\" is not a hex byte", line: node.mark?.line)
            }
            result.append(byte)
            index = next
        }
        return result
    }

    private static func optionValue(_ node: YAMLNode, keyPath: String) throws(ScenarioError) -> SimulationOptionValue {
        guard case .scalar(let scalar) = node else {
            throw ScenarioError(key: keyPath, reason: "options are single values", line: node.mark?.line)
        }
        if node.tag == .bool, let value = node.bool { return .bool(value) }
        if node.tag == .int, let value = node.int { return .int(value) }
        if node.tag == .float, let value = node.float { return .double(value) }
        return .string(scalar.string)
    }

    static let actionNames = [
        "drop_link", "refuse_connects", "stop_advertising", "start_advertising", "set_latency", "fail_next_call",
        "power_off", "power_on", "button_press", "find_my_phone", "spot_check", "set_rssi",
        "deafen_scanner", "stick_discovery", "remove_adapter", "restore_adapter",
    ]

    /// One timeline entry; `addresses` are the devices' and their companions' (a fault may hit a bootloader).
    private static func timedAction(_ node: YAMLNode, path: String, addresses: [BluetoothAddress]) throws(ScenarioError) -> TimedAction {
        var reader = try YAMLMappingReader(node, path: path)
        _ = try reader.required("at")
        let at = try reader.duration("at") ?? .zero
        let actionNode = try reader.required("action")
        let name = try reader.string("action", allowed: actionNames) ?? ""
        var device: BluetoothAddress?
        if let address = try address(&reader, "device") {
            guard addresses.contains(address) else {
                throw reader.error("device", "no device in this scenario has address \(address)", nil)
            }
            device = address
        }
        func requireDevice(_ reader: inout YAMLMappingReader) throws(ScenarioError) -> BluetoothAddress {
            guard let device else { throw reader.error("device", "is required for \(name)", actionNode) }
            return device
        }
        func errorReply(_ reader: inout YAMLMappingReader, default fallback: BlueZErrorReply) throws(ScenarioError) -> BlueZErrorReply {
            let message = try reader.string("message")
            guard let text = try reader.string("error") else {
                return message.map { BlueZErrorReply(name: fallback.name, message: $0) } ?? fallback
            }
            guard let reply = BlueZErrorReply(named: text, message: message) else {
                throw reader.error("error", "\"\(text)\" is not a D-Bus error name such as org.bluez.Error.InProgress", nil)
            }
            return reply
        }
        let action: SimulatorAction
        switch name {
        case "drop_link": action = .dropLink(try requireDevice(&reader))
        case "refuse_connects":
            let count = try reader.int("count", in: 1...1_000_000) ?? 1
            action = .refuseConnects(try requireDevice(&reader), count: count,
                                     error: try errorReply(&reader, default: .leConnectionAbortByLocal))
        case "stop_advertising": action = .setAdvertising(try requireDevice(&reader), false)
        case "start_advertising": action = .setAdvertising(try requireDevice(&reader), true)
        case "set_latency":
            _ = try reader.required("latency")
            action = .setLatency(device, try reader.duration("latency", in: .zero ... .seconds(120)) ?? .zero)
        case "fail_next_call":
            _ = try reader.required("method")
            action = .failNextCall(device, method: try reader.string("method") ?? "",
                                   error: try errorReply(&reader, default: .busy))
        case "power_off": action = .setPowered(false)
        case "power_on": action = .setPowered(true)
        case "button_press": action = .deviceEvent(try requireDevice(&reader), .buttonPress)
        case "find_my_phone": action = .deviceEvent(try requireDevice(&reader), .findMyPhone)
        case "spot_check": action = .deviceEvent(try requireDevice(&reader), .spotCheck)
        case "set_rssi":
            _ = try reader.required("rssi")
            action = .setRSSI(try requireDevice(&reader), try reader.int("rssi", in: -127...20) ?? -60)
        case "deafen_scanner":
            _ = try reader.required("cleared_by")
            let cure = try reader.string("cleared_by", allowed: DeafScannerCure.allCases.map(\.rawValue)) ?? ""
            action = .deafenScanner(clearedBy: DeafScannerCure(rawValue: cure) ?? .restart)
        case "stick_discovery": action = .stickDiscovery
        case "remove_adapter": action = .removeAdapter
        case "restore_adapter": action = .restoreAdapter
        default:
            throw reader.error("action", "unknown action", actionNode)
        }
        try reader.rejectUnknownKeys()
        return TimedAction(at: at, action)
    }
}

extension String {
    func dropPrefix(_ prefix: String) -> String { hasPrefix(prefix) ? String(dropFirst(prefix.count)) : self }
}
