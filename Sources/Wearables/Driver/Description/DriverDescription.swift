/// Everything the gateway and its surfaces (requests, Home Assistant, metrics, `bridge/devices`, the docs, a web
/// interface) know of one driver, declared once in the driver's folder, in the spirit of zigbee2mqtt's `exposes`
/// and Gadgetbridge's `DeviceCoordinator`. Static and JSON-serializable (`deviceValue`): a client builds forms and
/// plots from it without knowing any driver.
///
/// It does not replace the driver's own checks: a description says what a command takes so a form can offer it;
/// the driver still validates what only it can (a device's capabilities, values that depend on each other).
public struct DriverDescription: Sendable, Equatable {
    /// The registry key and the `<driver>` of default device ids (`[a-z0-9_]`).
    public var name: String
    /// Shown in `bridge/devices` when the device does not say who made it.
    public var vendor: String
    /// One line for people: which devices it serves.
    public var summary: String
    public var advertisement: AdvertisementDescription
    public var sensors: [SensorDescription]
    /// Every event its devices raise, one list per driver (`ArchitectureTests` checks the folder against it).
    /// Besides them every device may raise `DeviceLink.commonEvents`.
    public var events: [EventDescription]
    /// The commands it may accept, before a connection tells which apply; the gateway's own (firmware update,
    /// connect, disconnect) are listed too when the family supports them.
    public var commands: [CommandDescription]
    /// The settings every device of the family has; a driver whose settings depend on the device adds them from
    /// its state (`WearableDriver.settings(state:)`).
    public var settings: [SettingDescription]
    /// The kinds of durable records it downloads (`fitness/<kind>`).
    public var recordKinds: [String]
    public var firmwareUpdate: FirmwareUpdateDescription?
    public var pairing: PairingMethod
    /// Yes/no facts of the state document worth showing on their own (a strap recording on itself).
    public var statusFlags: [StatusFlagDescription]
    /// The vendor's code for "this device is already connected", given as `vendor_code` when `device/add` names a
    /// managed device again (the ActiGraph SDK's 10); nil when the vendor has none.
    public var existingConnectionVendorCode: Int?

    public init(name: String, vendor: String, summary: String, advertisement: AdvertisementDescription,
                sensors: [SensorDescription] = [], events: [EventDescription] = [], commands: [CommandDescription],
                settings: [SettingDescription] = [], recordKinds: [String] = [], firmwareUpdate: FirmwareUpdateDescription? = nil,
                pairing: PairingMethod = .none, statusFlags: [StatusFlagDescription] = [], existingConnectionVendorCode: Int? = nil) {
        self.name = name
        self.vendor = vendor
        self.summary = summary
        self.advertisement = advertisement
        self.sensors = sensors
        self.events = events
        self.commands = commands
        self.settings = settings
        self.recordKinds = recordKinds
        self.firmwareUpdate = firmwareUpdate
        self.pairing = pairing
        self.statusFlags = statusFlags
        self.existingConnectionVendorCode = existingConnectionVendorCode
    }

    public var commandNames: Set<String> { Set(commands.map(\.name)) }

    /// Its devices stream nothing and download records (a GoFIT band): a link held between two syncs serves only
    /// commands, so where connection slots are few (an ESPHome proxy) the gateway lets it go (`link: auto`).
    public var onlySyncs: Bool { sensors.isEmpty && !recordKinds.isEmpty && command("sync") != nil }
    public func command(_ name: String) -> CommandDescription? { commands.first { $0.name == name } }
}

/// How a driver recognises its devices before connecting, for people and user interfaces (the driver's `match`
/// decides; `DriverDescriptionTests` checks the two agree).
public struct AdvertisementDescription: Sendable, Equatable {
    /// Service UUIDs any one of which makes an advertisement likely this family's.
    public var serviceUUIDs: [String]
    /// Name prefixes the vendor uses.
    public var namePrefixes: [String]
    /// Bluetooth SIG company identifiers.
    public var manufacturerIDs: [UInt16]
    /// The driver for any device no other driver claims (the standard profiles): a device whose driver cannot be
    /// told yet gets it.
    public var isFallback: Bool

    public init(serviceUUIDs: [String] = [], namePrefixes: [String] = [], manufacturerIDs: [UInt16] = [], isFallback: Bool = false) {
        self.serviceUUIDs = serviceUUIDs
        self.namePrefixes = namePrefixes
        self.manufacturerIDs = manufacturerIDs
        self.isFallback = isFallback
    }
}

/// One `event` name, and the `action`s it may carry (a watch's `music` event: `play`, `next`, …), so each can be
/// its own automation trigger.
public struct EventDescription: Sendable, Equatable {
    public var name: String
    public var summary: String
    public var actions: [String]
    /// Raised only by devices whose GATT table has this service (16-bit, `1822`); nil: by every device of the family.
    public var service: String?

    public init(_ name: String, _ summary: String, actions: [String] = [], service: String? = nil) {
        self.name = name
        self.summary = summary
        self.actions = actions
        self.service = service
    }
}

/// How a family's firmware is updated through `request/dfu`.
public struct FirmwareUpdateDescription: Sendable, Equatable {
    public enum Method: String, Sendable {
        /// Nordic's Secure DFU (nRF5 SDK ≥ 12), or Legacy DFU (InfiniTime, older SDKs): the gateway tells which by the
        /// device's services.
        case nordicDFU = "nordic_dfu"
    }

    public var method: Method
    /// What a user must still do after an update (an InfiniTime watch wants the new image validated on the watch),
    /// added to the `dfu` answer; nil when nothing.
    public var note: String?

    public init(_ method: Method, note: String? = nil) {
        self.method = method
        self.note = note
    }
}

/// How a device of the family is paired (`bridge/request/device/pair`, then `…/pair/confirm` when a code is involved).
public enum PairingMethod: String, Sendable, Equatable {
    /// It needs none, or BlueZ pairs it when it asks, without a code.
    case none
    /// BlueZ pairing with a passkey the device shows and the user types in (`pair/confirm` with `code`).
    case passkey
    /// The vendor's own pairing: the device shows a code the user reads back (`pair/confirm` with `code`), run by the
    /// driver on the connected link (`pair`, `pair_confirm` are its commands).
    case codeShownOnDevice = "code_shown_on_device"
    /// A key the user got elsewhere (an app, a label) and enters (`pair/confirm` with `code`).
    case keyEnteredByUser = "key_entered_by_user"

    /// The driver's commands a `codeShownOnDevice` pairing runs: one asks the device to show its code, the other
    /// takes the code back (`{"code": …}`).
    public static let showCodeCommand = "pair"
    public static let confirmCodeCommand = "pair_confirm"
}

/// A yes/no fact the state document shows (a Polar H10 recording on itself), shown only when the device's state says
/// it has the capability.
public struct StatusFlagDescription: Sendable, Equatable {
    /// Its key (`recording`), and a name for people.
    public var key: String
    public var name: String
    /// Where the state document shows it (`["recording", "active"]`).
    public var statePath: [String]
    /// The capability that says a device has it (`["capabilities", "recording"]`).
    public var capabilityPath: [String]
    public var icon: String?

    public init(_ key: String, name: String, statePath: [String], capabilityPath: [String], icon: String? = nil) {
        self.key = key
        self.name = name
        self.statePath = statePath
        self.capabilityPath = capabilityPath
        self.icon = icon
    }
}

extension DriverDescription {
    /// The sensors a connected device sends without being asked, from its GATT table's services (full UUIDs).
    public func expectedSensors(serviceUUIDs: [String]) -> [SensorKind] {
        sensors.filter { sensor in
            switch sensor.presence {
            case .always: true
            case .whenConfigured: false
            case .whenService(let service): Self.has(service, in: serviceUUIDs)
            }
        }.map(\.kind)
    }

    /// The events a device raises, from its GATT table's services: a family's own, and those of services it has.
    public func events(serviceUUIDs: [String]) -> [EventDescription] {
        events.filter { $0.service.map { Self.has($0, in: serviceUUIDs) } ?? true }
    }

    /// Whether a 16-bit SIG service (`180d`) is among full 128-bit UUIDs.
    static func has(_ service: String, in uuids: [String]) -> Bool {
        let prefix = "0000" + service.lowercased()
        return uuids.contains { $0.lowercased().hasPrefix(prefix) && $0.lowercased().hasSuffix(GATTUUID.baseSuffix) }
    }
}
