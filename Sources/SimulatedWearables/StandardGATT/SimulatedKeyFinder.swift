import Wearables

/// A key-finder tag: Immediate Alert 0x1802 (Alert Level 0x2A06, write without response; the tag beeps at the
/// level written), Battery 0x180F, and a button.
///
/// The button is *modeled* on the cheap "iTag" tags: a vendor service 0xFFE0 whose characteristic 0xFFE1
/// notifies when the button is pressed. Which byte such tags send is not documented; here a single press sends
/// 0x01 and a find-my-phone request (the user asking the tag to ring the phone) sends 0x02.
///
/// Options: `battery` (90), `battery_drain_per_hour` (0.01).
public actor SimulatedKeyFinder: SimulatedPeripheral {
    public nonisolated let advertisement: SimulatedAdvertisement
    public nonisolated let services: [SimulatedService]
    public nonisolated let deviceName: String

    private var battery: SimulatedBattery
    /// The level the tag is alerting at now; the host records every write separately.
    public private(set) var alertLevel: AlertLevel = .none

    static let alertLevelUUID = BluetoothUUID(GATTUUID.Characteristic.alertLevel)
    static let buttonServiceUUID = BluetoothUUID(0xFFE0)
    static let buttonUUID = BluetoothUUID(0xFFE1)
    static let singlePress: [UInt8] = [0x01]
    static let findMyPhone: [UInt8] = [0x02]

    public init(_ configuration: SimulatedDeviceConfiguration) throws(SimulatedDeviceConfigurationError) {
        var options = SimulationOptionReader(configuration.options)
        battery = try SimulatedBattery(reading: &options, defaultLevel: 90)
        try options.rejectUnknownKeys()

        let name = configuration.name ?? "iTAG"
        deviceName = name
        advertisement = SimulatedAdvertisement(
            localName: name, serviceUUIDs: [Self.buttonServiceUUID],
            appearance: 0x0200, // Generic Tag
            rssi: -70)
        services = [
            SimulatedService(BluetoothUUID(GATTUUID.Service.immediateAlert), characteristics: [
                SimulatedCharacteristic(Self.alertLevelUUID, flags: .writeWithoutResponse),
            ]),
            battery.service,
            SimulatedService(Self.buttonServiceUUID, characteristics: [
                SimulatedCharacteristic(Self.buttonUUID, flags: [.read, .notify], initialValue: [0x00]),
            ]),
        ]
    }

    /// Tags only act on writes and button presses; nothing to do periodically.
    public func run(on link: any PeripheralLink) async {}

    public func read(_ characteristic: BluetoothUUID) async throws(ATTError) -> [UInt8] {
        switch characteristic {
        case SimulatedBattery.levelUUID: return battery.encoded
        case Self.buttonUUID: return [0x00]
        default: throw .readNotPermitted
        }
    }

    public func write(_ characteristic: BluetoothUUID, value: [UInt8], kind: WriteKind) async throws(ATTError) {
        guard characteristic == Self.alertLevelUUID else { throw .writeNotPermitted }
        // A reserved level is ignored, as the write has no response to carry an error.
        if let level = try? AlertLevel.decode(value) { alertLevel = level }
    }

    public func handle(_ event: DeviceEvent, link: (any PeripheralLink)?) async -> Bool {
        switch event {
        case .buttonPress: await link?.notify(Self.buttonUUID, value: Self.singlePress)
        case .findMyPhone: await link?.notify(Self.buttonUUID, value: Self.findMyPhone)
        default: return false
        }
        return true
    }
}

extension SimulatedDeviceKind {
    public static let keyFinder = SimulatedDeviceKind(
        name: "key_finder", summary: "tag: Immediate Alert 0x1802, Battery, button (modeled iTag 0xFFE0/0xFFE1)"
    ) { configuration throws(SimulatedDeviceConfigurationError) in try SimulatedKeyFinder(configuration) }
}
