import Wearables

/// A request to the gateway itself, `<base>/bridge/request/<name>`, with its fields checked and typed.
///
/// It does not know which devices exist: ids are only checked to be strings, and the gateway answers
/// `DEVICE_NOT_FOUND` for one it does not manage. Unknown fields are refused as in device commands.
public enum BridgeRequest: Sendable, Equatable {
    /// `scan`: discover for a while; devices stream out as `device_found` events.
    case scan(ScanRequest)
    /// `scan/stop`.
    case stopScan
    /// `device/add` `{"address","driver"?,"name"?}`; the address is normalized to `AA:BB:CC:DD:EE:FF`.
    case addDevice(address: String, driver: String?, name: String?)
    /// `device/add` `{"serial","driver"?,"name"?}`: a device that advertises its serial (an ActiGraph Link's
    /// `TAS…`), seen by a scan, as the SDK's `connectToDevice:serial` finds it.
    case addDeviceBySerial(serial: String, driver: String?, name: String?)
    /// `device/remove` `{"id"}`.
    case removeDevice(id: String)
    /// `device/rename` `{"id","name"}`; the new name is a valid device id.
    case renameDevice(id: String, name: String)
    /// `device/pair` `{"id"}`.
    case pairDevice(id: String)
    /// `device/pair/confirm` `{"id","code"}`: the passkey or PIN the device shows, as digits.
    case confirmPairing(id: String, code: String)
    /// `device/options` `{"id","options":{…}}`; empty `options` changes nothing (and can be used to read
    /// the current options back in the response).
    case setDeviceOptions(id: String, DeviceOptionsChange)
    /// `firmware/list`: the packages in `dfu.dir` with their SHA-256 and versions.
    case listFirmware
    /// `options` `{"options":{…}}`: log level, health interval and device options while running.
    case options(BridgeOptionsChange)
    /// `health_check`: whether the gateway is healthy, and why not.
    case healthCheck

    /// Every bridge request of contract version 1.
    public static let names = [
        "scan", "scan/stop", "device/add", "device/remove", "device/rename", "device/pair", "device/pair/confirm",
        "device/options", "firmware/list", "options", "health_check",
    ]

    public init(name: String, arguments: [String: DeviceValue]) throws(CommandError) {
        let reader = RequestReader(arguments)
        switch name {
        case "scan":
            try reader.rejectUnknownFields(allowed: ["duration_s", "filter"], request: name)
            self = .scan(try ScanRequest(reader))
        case "scan/stop":
            try reader.rejectUnknownFields(allowed: [], request: name)
            self = .stopScan
        case "firmware/list":
            try reader.rejectUnknownFields(allowed: [], request: name)
            self = .listFirmware
        case "health_check":
            try reader.rejectUnknownFields(allowed: [], request: name)
            self = .healthCheck
        case "options":
            try reader.rejectUnknownFields(allowed: ["options"], request: name)
            let options = try reader.required(try reader.object("options"), "options", "an object of options to change")
            self = .options(try BridgeOptionsChange(RequestReader(options, path: "options.")))
        case "device/add":
            try reader.rejectUnknownFields(allowed: ["address", "serial", "driver", "name"], request: name)
            let serial = try reader.nonEmptyString("serial")
            let text = try reader.string("address")
            let driver = try reader.string("driver")
            if let driver, let problem = ConfigurationRules.segmentProblem(driver) {
                throw CommandError(.invalidValue, "driver \(problem)")
            }
            let deviceName = try reader.string("name")
            if let deviceName { try DeviceIdentifier.validate(deviceName) }
            if let serial {
                guard text == nil else { throw CommandError(.invalidValue, "device/add takes an address or a serial, not both") }
                self = .addDeviceBySerial(serial: serial, driver: driver, name: deviceName)
                return
            }
            let given = try reader.required(text, "address", "the device's Bluetooth address (or its serial, for a device that advertises one)")
            guard let address = DeviceIdentifier.normalizedAddress(given) else {
                throw reader.invalid("address", "must be a Bluetooth address like AA:BB:CC:DD:EE:FF", got: .text(given))
            }
            self = .addDevice(address: address, driver: driver, name: deviceName)
        case "device/remove":
            try reader.rejectUnknownFields(allowed: ["id"], request: name)
            self = .removeDevice(id: try Self.id(reader))
        case "device/rename":
            try reader.rejectUnknownFields(allowed: ["id", "name"], request: name)
            let id = try Self.id(reader)
            let newName = try reader.required(try reader.string("name"), "name", "the device's new id")
            try DeviceIdentifier.validate(newName)
            self = .renameDevice(id: id, name: newName)
        case "device/pair":
            try reader.rejectUnknownFields(allowed: ["id"], request: name)
            self = .pairDevice(id: try Self.id(reader))
        case "device/pair/confirm":
            try reader.rejectUnknownFields(allowed: ["id", "code"], request: name)
            let id = try Self.id(reader)
            let code = try reader.required(try reader.string("code"), "code", "the digits the device shows, as a string")
            guard (1...16).contains(code.utf8.count), code.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            else {
                throw reader.invalid("code", "must be a string of 1 to 16 digits such as \"123456\"", got: .text(code))
            }
            self = .confirmPairing(id: id, code: code)
        case "device/options":
            try reader.rejectUnknownFields(allowed: ["id", "options"], request: name)
            let id = try Self.id(reader)
            let options = try reader.required(try reader.object("options"), "options", "an object of options to change")
            self = .setDeviceOptions(id: id, try DeviceOptionsChange(RequestReader(options, path: "options.")))
        default:
            throw CommandError(
                .unknownCommand,
                "unknown bridge request \"\(name)\"; bridge requests are \(RequestReader.list(Self.names, conjunction: "and"))")
        }
    }

    /// The request's name as the contract spells it.
    public var name: String {
        switch self {
        case .scan: "scan"
        case .stopScan: "scan/stop"
        case .addDevice, .addDeviceBySerial: "device/add"
        case .removeDevice: "device/remove"
        case .renameDevice: "device/rename"
        case .pairDevice: "device/pair"
        case .confirmPairing: "device/pair/confirm"
        case .setDeviceOptions: "device/options"
        case .listFirmware: "firmware/list"
        case .options: "options"
        case .healthCheck: "health_check"
        }
    }

    private static func id(_ reader: RequestReader) throws(CommandError) -> String {
        try reader.required(try reader.nonEmptyString("id"), "id", "the device's id as in its topics")
    }
}

/// `scan` `{"duration_s"?: 1…300, "filter"?: {"uuids"?, "rssi"?, "name"?}}`.
public struct ScanRequest: Sendable, Equatable {
    public static let defaultDurationSeconds = 10

    public var durationSeconds: Int
    public var filter: ScanFilter

    public init(durationSeconds: Int = ScanRequest.defaultDurationSeconds, filter: ScanFilter = ScanFilter()) {
        self.durationSeconds = durationSeconds
        self.filter = filter
    }

    init(_ reader: RequestReader) throws(CommandError) {
        durationSeconds = Int(try reader.integer("duration_s", in: 1...300, unit: " seconds") ?? Int64(Self.defaultDurationSeconds))
        if let filter = try reader.object("filter") {
            self.filter = try ScanFilter(RequestReader(filter, path: "filter."))
        } else {
            self.filter = ScanFilter()
        }
    }
}

/// Which advertisements a scan reports. Empty means all.
public struct ScanFilter: Sendable, Equatable {
    /// Service UUIDs, normalized to lower-case 128-bit form (`180d` → `0000180d-0000-1000-8000-00805f9b34fb`).
    public var uuids: [String]
    /// Only devices at least this strong, in dBm.
    public var rssi: Int?
    /// Only devices whose advertised name contains this text.
    public var name: String?

    public init(uuids: [String] = [], rssi: Int? = nil, name: String? = nil) {
        self.uuids = uuids
        self.rssi = rssi
        self.name = name
    }

    init(_ reader: RequestReader) throws(CommandError) {
        try reader.rejectUnknownFields(allowed: ["uuids", "rssi", "name"], request: "scan")
        var uuids: [String] = []
        for value in try reader.list("uuids") ?? [] {
            guard let text = value.text, let uuid = Self.normalizedUUID(text) else {
                throw reader.invalid(
                    "uuids", "must list UUIDs such as \"180d\" or \"0000180d-0000-1000-8000-00805f9b34fb\"", got: value)
            }
            uuids.append(uuid)
        }
        self.uuids = uuids
        rssi = try reader.integer("rssi", in: -127...20, unit: " dBm").map { Int($0) }
        name = try reader.nonEmptyString("name")
    }

    /// 16-bit (`180d`), 32-bit (`0000180d`) or 128-bit UUIDs, in either case, as lower-case 128-bit text.
    static func normalizedUUID(_ text: String) -> String? {
        let lower = text.lowercased()
        let bytes = Array(lower.utf8)
        switch bytes.count {
        case 4 where bytes.allSatisfy(RequestReader.isHexDigit):
            return "0000\(lower)-0000-1000-8000-00805f9b34fb"
        case 8 where bytes.allSatisfy(RequestReader.isHexDigit):
            return "\(lower)-0000-1000-8000-00805f9b34fb"
        case 36:
            for (offset, byte) in bytes.enumerated() {
                let isDash = [8, 13, 18, 23].contains(offset)
                guard isDash ? byte == UInt8(ascii: "-") : RequestReader.isHexDigit(byte) else { return nil }
            }
            return lower
        default:
            return nil
        }
    }
}

/// The per-device options `device/options` may change; `nil` leaves an option as it is.
public struct DeviceOptionsChange: Sendable, Equatable {
    /// Sample batching window, 0…10000 ms; 0 publishes every sample on its own.
    public var batchMilliseconds: Int?
    /// QoS of sample messages, 0…2.
    public var sampleQoS: Int?
    /// Retain sample messages.
    public var retainSamples: Bool?
    /// `acquire` (AcquireNotify) or `start_notify`.
    public var notify: String?
    /// `always`, `on_demand` or `auto`.
    public var link: LinkMode?
    /// 60…86400 s between two visits of an on-demand device.
    public var syncEverySeconds: Int?

    public static let notifyMethods = ["acquire", "start_notify"]
    public static let syncIntervals: ClosedRange<Int64> = 60...86_400

    public init(batchMilliseconds: Int? = nil, sampleQoS: Int? = nil, retainSamples: Bool? = nil, notify: String? = nil,
                link: LinkMode? = nil, syncEverySeconds: Int? = nil) {
        self.batchMilliseconds = batchMilliseconds
        self.sampleQoS = sampleQoS
        self.retainSamples = retainSamples
        self.notify = notify
        self.link = link
        self.syncEverySeconds = syncEverySeconds
    }

    init(_ reader: RequestReader) throws(CommandError) {
        try reader.rejectUnknownFields(allowed: ["batch_ms", "qos", "retain", "notify", "link", "sync_every_s"],
                                       request: "device/options")
        batchMilliseconds = try reader.integer("batch_ms", in: 0...10_000, unit: " milliseconds").map { Int($0) }
        sampleQoS = try reader.integer("qos", in: 0...2).map { Int($0) }
        retainSamples = try reader.bool("retain")
        notify = try reader.choice("notify", from: Self.notifyMethods)
        link = try reader.choice("link", from: LinkMode.allCases.map(\.rawValue)).flatMap(LinkMode.init(rawValue:))
        syncEverySeconds = try reader.integer("sync_every_s", in: Self.syncIntervals, unit: " seconds").map { Int($0) }
    }

    public var isEmpty: Bool { self == DeviceOptionsChange() }

    /// The fields this sets, as the contract spells them.
    public var object: [String: DeviceValue] {
        var object: [String: DeviceValue] = [:]
        if let batchMilliseconds { object["batch_ms"] = .integer(Int64(batchMilliseconds)) }
        if let sampleQoS { object["qos"] = .integer(Int64(sampleQoS)) }
        if let retainSamples { object["retain"] = .flag(retainSamples) }
        if let notify { object["notify"] = .text(notify) }
        if let link { object["link"] = .text(link.rawValue) }
        if let syncEverySeconds { object["sync_every_s"] = .integer(Int64(syncEverySeconds)) }
        return object
    }

    /// `options` with what this changes.
    public func applied(to options: DeviceOptions) -> DeviceOptions {
        var options = options
        if let batchMilliseconds { options.batchMilliseconds = batchMilliseconds }
        if let sampleQoS { options.sampleQoS = sampleQoS }
        if let retainSamples { options.retainSamples = retainSamples }
        if let notify { options.notify = notify }
        if let link { options.link = link }
        if let syncEverySeconds { options.syncEverySeconds = syncEverySeconds }
        return options
    }
}
