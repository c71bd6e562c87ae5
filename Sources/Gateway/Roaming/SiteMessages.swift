import FoundationEssentials
import Wearables

/// Why a site message was refused: the field and what was wrong with it. A gateway ignores (and logs) such a
/// message rather than act on half of it.
public struct SiteMessageError: Error, Sendable, Equatable, CustomStringConvertible {
    public let field: String
    public let problem: String

    init(_ field: String, _ problem: String) {
        self.field = field
        self.problem = problem
    }

    public var description: String { "\(field): \(problem)" }
}

/// The JSON of the site's messages (docs/roaming.md, "Topics"): written with sorted keys, read strictly (every
/// required field present and of its type, numbers in range). Unknown fields are ignored, so a later version can
/// add some.
public enum SiteMessages {
    /// Site messages are small; a larger one is refused before it is parsed.
    static let limits = JSONLimits(maximumBytes: 256 * 1024, maximumDepth: 16)

    // MARK: gateways/<id>

    public struct GatewayRecord: Sendable, Equatable {
        public var room: String?
        public var startedMilliseconds: Int64
        public var version: String

        public init(room: String?, startedMilliseconds: Int64, version: String) {
            self.room = room
            self.startedMilliseconds = startedMilliseconds
            self.version = version
        }
    }

    public static func encode(_ record: GatewayRecord) -> [UInt8] {
        var members: [String: DeviceValue] = ["started": .integer(record.startedMilliseconds), "version": .text(record.version)]
        members["room"] = record.room.map(DeviceValue.text) ?? .null
        return write(members)
    }

    public static func gatewayRecord(_ bytes: [UInt8]) throws(SiteMessageError) -> GatewayRecord {
        let fields = try object(bytes)
        return GatewayRecord(room: try optionalText(fields, "room"), startedMilliseconds: try integer(fields, "started", minimum: 0),
                             version: try text(fields, "version"))
    }

    // MARK: sightings/<gateway>

    public static func encode(_ report: SightingReport, atMilliseconds: Int64) -> [UInt8] {
        var devices: [String: DeviceValue] = [:]
        for (device, sighting) in report.devices {
            devices[device] = .object(["rssi": .number(sighting.rssi), "heard": .integer(Int64(sighting.heard)),
                                       "connected": .flag(sighting.connected), "lost": .flag(sighting.lost)])
        }
        return write(["at": .integer(atMilliseconds), "devices": .object(devices)])
    }

    /// The report of `gateway` (named by the topic, not the payload, so a gateway cannot report for another).
    public static func sightingReport(_ bytes: [UInt8], gateway: String) throws(SiteMessageError) -> (report: SightingReport, atMilliseconds: Int64) {
        let fields = try object(bytes)
        guard case .object(let listed)? = fields["devices"] else { throw SiteMessageError("devices", "expected an object") }
        var devices: [String: SightingReport.Sighting] = [:]
        for (device, value) in listed {
            guard case .object(let sighting) = value else { throw SiteMessageError("devices.\(device)", "expected an object") }
            let rssi = try number(sighting, "devices.\(device).rssi", key: "rssi", range: -150...30)
            let heard = try integer(sighting, "heard", minimum: 0, label: "devices.\(device).heard")
            devices[device] = SightingReport.Sighting(
                rssi: rssi, heard: Int(clamping: heard), connected: try flag(sighting, "connected", label: "devices.\(device).connected"),
                lost: try flag(sighting, "lost", label: "devices.\(device).lost"))
        }
        return (SightingReport(gateway: gateway, devices: devices), try integer(fields, "at", minimum: 0))
    }

    // MARK: owners/<device>

    public static func encode(_ assignment: SiteAssignment, sinceMilliseconds: Int64) -> [UInt8] {
        write(["gateway": .text(assignment.gateway), "epoch": .integer(Int64(clamping: assignment.epoch)),
               "referee": .text(assignment.referee), "reason": .text(assignment.reason.rawValue),
               "since": .integer(sinceMilliseconds)])
    }

    public static func assignment(_ bytes: [UInt8]) throws(SiteMessageError) -> (assignment: SiteAssignment, sinceMilliseconds: Int64) {
        let fields = try object(bytes)
        let reasonText = try text(fields, "reason")
        guard let reason = SiteAssignment.Reason(rawValue: reasonText) else {
            throw SiteMessageError("reason", "unknown reason \"\(reasonText)\"")
        }
        let assignment = SiteAssignment(gateway: try nonEmptyText(fields, "gateway"),
                                        epoch: UInt64(try integer(fields, "epoch", minimum: 1)),
                                        referee: try nonEmptyText(fields, "referee"), reason: reason)
        return (assignment, try integer(fields, "since", minimum: 0))
    }

    // MARK: handoff/<device>

    /// What a previous owner hands to the next: the driver's stored entries (cursors, held configuration).
    public struct Handoff: Sendable, Equatable {
        public var epoch: UInt64
        public var from: String
        public var releasedMilliseconds: Int64
        public var storage: [String: [String: DeviceValue]]

        public init(epoch: UInt64, from: String, releasedMilliseconds: Int64, storage: [String: [String: DeviceValue]]) {
            self.epoch = epoch
            self.from = from
            self.releasedMilliseconds = releasedMilliseconds
            self.storage = storage
        }
    }

    public static func encode(_ handoff: Handoff) -> [UInt8] {
        write(["epoch": .integer(Int64(clamping: handoff.epoch)), "from": .text(handoff.from),
               "released": .integer(handoff.releasedMilliseconds),
               "storage": .object(handoff.storage.mapValues { .object($0) })])
    }

    public static func handoff(_ bytes: [UInt8]) throws(SiteMessageError) -> Handoff {
        let fields = try object(bytes)
        guard case .object(let entries)? = fields["storage"] else { throw SiteMessageError("storage", "expected an object") }
        var storage: [String: [String: DeviceValue]] = [:]
        for (name, value) in entries {
            guard case .object(let entry) = value else { throw SiteMessageError("storage.\(name)", "expected an object") }
            storage[name] = entry
        }
        return Handoff(epoch: UInt64(try integer(fields, "epoch", minimum: 1)), from: try nonEmptyText(fields, "from"),
                       releasedMilliseconds: try integer(fields, "released", minimum: 0), storage: storage)
    }

    // MARK: registry/<device>

    /// A managed device as the site's registry holds it: its entry as the device list stores it (address, driver,
    /// name, options, held configuration).
    public static func encode(_ device: ManagedDevice) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(device)).map(Array.init) ?? []
    }

    public static func registryEntry(_ bytes: [UInt8], id: String) throws(SiteMessageError) -> ManagedDevice {
        guard bytes.count <= limits.maximumBytes else { throw SiteMessageError("payload", "larger than \(limits.maximumBytes) bytes") }
        let device: ManagedDevice
        do { device = try JSONDecoder().decode(ManagedDevice.self, from: Data(bytes)) } catch {
            throw SiteMessageError("payload", "not a device entry: \(error)")
        }
        guard device.id == id else { throw SiteMessageError("id", "the entry names \(device.id), its topic \(id)") }
        if let problem = DeviceIdentifier.problem(id) { throw SiteMessageError("id", problem) }
        guard DeviceIdentifier.normalizedAddress(device.address) == device.address else {
            throw SiteMessageError("address", "\"\(device.address)\" is not a Bluetooth address")
        }
        return device
    }

    // MARK: devices/<gateway>

    /// The `bridge/devices` entries of the devices a gateway holds, in `bridge/devices`' own format (sorted by id).
    public static func encode(_ entries: [BridgeDeviceEntry]) -> [UInt8] { BridgePayload.devices(entries) }

    /// A gateway's entries, read back as strictly as the other site messages; `gateway` is the topic's (a gateway
    /// cannot speak for another).
    public static func deviceEntries(_ bytes: [UInt8], gateway: String) throws(SiteMessageError) -> [BridgeDeviceEntry] {
        let value: DeviceValue
        do { value = try JSONParser.parse(bytes, limits: limits) } catch { throw SiteMessageError("payload", "\(error)") }
        guard case .list(let items) = value else { throw SiteMessageError("payload", "expected a JSON array") }
        var entries: [BridgeDeviceEntry] = []
        for (index, item) in items.enumerated() {
            guard case .object(let fields) = item else { throw SiteMessageError("[\(index)]", "expected an object") }
            var capabilities: [String] = []
            if case .list(let listed)? = fields["capabilities"] {
                for capability in listed {
                    guard case .text(let name) = capability else { throw SiteMessageError("[\(index)].capabilities", "expected text") }
                    capabilities.append(name)
                }
            } else {
                throw SiteMessageError("[\(index)].capabilities", "expected an array")
            }
            let id = try nonEmptyText(fields, "id")
            if let problem = DeviceIdentifier.problem(id) { throw SiteMessageError("[\(index)].id", problem) }
            entries.append(BridgeDeviceEntry(
                id: id, name: try optionalText(fields, "name"), vendor: try optionalText(fields, "vendor"),
                model: try optionalText(fields, "model"), address: try text(fields, "address"), driver: try text(fields, "driver"),
                capabilities: capabilities, paired: try flag(fields, "paired", label: "[\(index)].paired"),
                connected: try flag(fields, "connected", label: "[\(index)].connected"), gateway: gateway,
                radio: try optionalText(fields, "radio")))
        }
        return entries
    }

    // MARK: Reading and writing

    private static func write(_ members: [String: DeviceValue]) -> [UInt8] {
        var writer = JSONWriter()
        writer.value(.object(members))
        return writer.bytes
    }

    private static func object(_ bytes: [UInt8]) throws(SiteMessageError) -> [String: DeviceValue] {
        let value: DeviceValue
        do { value = try JSONParser.parse(bytes, limits: limits) } catch { throw SiteMessageError("payload", "\(error)") }
        guard case .object(let fields) = value else { throw SiteMessageError("payload", "expected a JSON object") }
        return fields
    }

    private static func text(_ fields: [String: DeviceValue], _ key: String) throws(SiteMessageError) -> String {
        guard case .text(let value)? = fields[key] else { throw SiteMessageError(key, "expected text") }
        return value
    }

    private static func nonEmptyText(_ fields: [String: DeviceValue], _ key: String) throws(SiteMessageError) -> String {
        let value = try text(fields, key)
        guard !value.isEmpty else { throw SiteMessageError(key, "must not be empty") }
        return value
    }

    private static func optionalText(_ fields: [String: DeviceValue], _ key: String) throws(SiteMessageError) -> String? {
        switch fields[key] {
        case nil, .null?: return nil
        case .text(let value)?: return value
        default: throw SiteMessageError(key, "expected text or null")
        }
    }

    private static func integer(_ fields: [String: DeviceValue], _ key: String, minimum: Int64,
                                label: String? = nil) throws(SiteMessageError) -> Int64 {
        guard let value = fields[key]?.integer else { throw SiteMessageError(label ?? key, "expected a whole number") }
        guard value >= minimum else { throw SiteMessageError(label ?? key, "must be at least \(minimum)") }
        return value
    }

    private static func number(_ fields: [String: DeviceValue], _ label: String, key: String,
                               range: ClosedRange<Double>) throws(SiteMessageError) -> Double {
        let value: Double
        switch fields[key] {
        case .integer(let integer)?: value = Double(integer)
        case .number(let number)?: value = number
        default: throw SiteMessageError(label, "expected a number")
        }
        guard range.contains(value) else { throw SiteMessageError(label, "must be within \(range.lowerBound)…\(range.upperBound)") }
        return value
    }

    private static func flag(_ fields: [String: DeviceValue], _ key: String, label: String) throws(SiteMessageError) -> Bool {
        guard case .flag(let value)? = fields[key] else { throw SiteMessageError(label, "expected true or false") }
        return value
    }
}
