import BlueZ
import DBus
import Wearables
import SimulatedWearables

/// Everything the simulated bluetoothd knows of and does with one simulated device: the radio side (is it
/// advertising, how strong is it) and BlueZ's side (is its object exported, paired, connected, which GATT
/// objects and notify sessions exist). Owned and mutated only by `SimulatedBluetoothDaemon`.
final class SimulatedDevice {
    let settings: DeviceSettings
    let peripheral: any SimulatedPeripheral
    let layout: GATTLayout
    let path: ObjectPath
    let deviceDefinition: InterfaceDefinition
    /// The scenario's kind, or the companion's (`secure_dfu_bootloader`), for listings.
    let kindName: String
    /// Where this device's companion lives, when its peripheral has one.
    var companionAddress: BluetoothAddress?

    // The radio.
    var advertising: Bool
    var rssi: Int
    var random: SimulationRandom
    /// Noise in place of the built-in fading (`SetRSSINoise`); nil: the fading.
    var rssiNoise: RSSINoise?
    var nextSighting: ContinuousClock.Instant?

    // BlueZ's view.
    var isExported = false
    var temporary = true
    var lastSeen: ContinuousClock.Instant?
    /// The RSSI BlueZ reports; nil when absent (never seen, or invalidated when discovery stopped).
    var reportedRSSI: Int?
    var knownName: String?
    var knownAppearance: UInt16?
    var alias: String?
    var paired = false
    var bonded = false
    var trusted = false
    var blocked = false
    var advertisedUUIDs: [BluetoothUUID] = []
    var link = DeviceLinkStateMachine()
    var mtu = 23
    var linkObject: SimulatedLink?
    var behaviour: Task<Void, Never>?
    var gattExported = false
    var servicesResolved = false
    var batteryExported = false
    var batteryPercentage: UInt8?
    /// Characteristics the battery plugin subscribed to itself (bluetoothd's own, not a D-Bus client's).
    var internalSubscriptions: Set<BluetoothUUID> = []
    /// Whether the peripheral was last told that each characteristic is subscribed.
    var peripheralSubscriptions: Set<BluetoothUUID> = []
    var notify: [String: NotifySessions] = [:]
    var notifySockets: [String: AcquiredSocket] = [:]
    var writeSockets: [String: AcquiredSocket] = [:]
    var readsInFlight: [String: (offset: Int, waiters: [CheckedContinuation<Result<[UInt8], BlueZErrorReply>, Never>])] = [:]
    var writesInFlight: Set<String> = []
    /// Write commands on their way to the device, delivered in order by one task (ATT keeps a link's writes in
    /// order; a DFU image arrives as a run of them). A write request waits for the commands written before it.
    var commands = CommandQueue()
    var descriptorValues: [String: [UInt8]] = [:]
    var valueCache: [String: [UInt8]] = [:]
    var connectWaiters: [CheckedContinuation<Result<Void, BlueZErrorReply>, Never>] = []
    var disconnectWaiters: [CheckedContinuation<Void, Never>] = []
    var resolutionWaiters: [CheckedContinuation<Bool, Never>] = []
    /// The attempt that waits for the device to advertise before it can complete.
    var attemptAwaitingAdvertising: Int?
    var pairing: PairingInFlight?
    var faults = DeviceFaults()
    /// Every value written to each characteristic that reached the device, in order.
    var received: [BluetoothUUID: [[UInt8]]] = [:]

    struct PairingInFlight {
        var id: Int
        var agent: AgentRegistry.Agent?
        var waiter: CheckedContinuation<Result<Void, BlueZErrorReply>, Never>?
    }

    init(settings: DeviceSettings, peripheral: any SimulatedPeripheral, kindName: String, adapterPath: ObjectPath,
         deviceDefinition: InterfaceDefinition, seed: UInt64) {
        self.settings = settings
        self.peripheral = peripheral
        self.kindName = kindName
        self.deviceDefinition = deviceDefinition
        path = adapterPath.appending(settings.address.pathElement)
        layout = GATTLayout(deviceServices: peripheral.services, deviceName: peripheral.deviceName,
                            appearance: peripheral.advertisement.appearance)
        advertising = settings.advertising
        rssi = settings.rssi ?? peripheral.advertisement.rssi
        random = SimulationRandom(seed: seed)
        trusted = settings.trusted
        if settings.paired {
            paired = true
            bonded = true
            temporary = false
            knownName = peripheral.deviceName
            knownAppearance = peripheral.advertisement.appearance
        }
        for service in layout.exportedServices {
            for characteristic in service.characteristics where characteristic.flags.contains(.notify) || characteristic.flags.contains(.indicate) {
                notify[characteristic.relativePath] = NotifySessions(canNotify: characteristic.flags.contains(.notify),
                                                                     canIndicate: characteristic.flags.contains(.indicate))
            }
        }
    }

    var address: BluetoothAddress { settings.address }

    /// The advertisement as it goes on the air now (scenario overrides applied).
    var advertisement: SimulatedAdvertisement {
        var advertisement = peripheral.advertisement
        if let name = settings.name { advertisement.localName = name }
        if let data = settings.manufacturerData { advertisement.manufacturerData = data }
        if let data = settings.serviceData { advertisement.serviceData = data }
        if let power = settings.txPower { advertisement.txPower = power }
        advertisement.rssi = rssi
        return advertisement
    }

    /// What BlueZ shows as Alias: the alias set by a client, else the name, else the dashed address.
    var effectiveAlias: String { alias ?? knownName ?? address.dashed }

    /// Whether the GATT objects stay exported across a disconnection (main.conf `[GATT] Cache`).
    func keepsGATT(under policy: GATTCachePolicy) -> Bool {
        switch policy {
        case .always: true
        case .yes: paired
        case .no: false
        }
    }

    /// `objectPath` relative to this device's path (`service000c/char000d`), or nil when not below it.
    func relativePath(of objectPath: ObjectPath) -> String? {
        let prefix = path.rawValue + "/"
        guard objectPath.rawValue.hasPrefix(prefix) else { return nil }
        return String(objectPath.rawValue.dropFirst(prefix.count))
    }

    func objectPath(_ relative: String) -> ObjectPath { ObjectPath(path.rawValue + "/" + relative) }

    /// Whether the device should be sending on `characteristic` (some client or bluetoothd itself subscribed).
    func isSubscribed(_ characteristic: GATTLayout.Characteristic) -> Bool {
        internalSubscriptions.contains(characteristic.uuid) || (notify[characteristic.relativePath]?.isSubscribed ?? false)
    }
}
