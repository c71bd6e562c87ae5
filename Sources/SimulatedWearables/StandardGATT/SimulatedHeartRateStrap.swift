import EventLoop
import Wearables

/// A chest heart-rate strap: Heart Rate Service 0x180D (Measurement 0x2A37 notify with bpm, sensor contact and
/// RR intervals; Body Sensor Location 0x2A38; Control Point 0x2A39 resetting energy expended), Battery
/// 0x180F and Device Information 0x180A. Bytes come from the `GATT` codecs the gateway decodes with.
///
/// Options: `rate_hz` (1; up to 200 for benchmarks), `bpm` (resting rate, 72), `contact` (true), `rr_intervals`
/// (true), `energy_expended` (true), `wide_heart_rate` (false: the rate as u8 when it fits),
/// `body_sensor_location` (chest), `battery` (85), `battery_drain_per_hour` (1), and the Device Information
/// strings (`manufacturer`, `model`, `serial`, `hardware`, `firmware`, `software`).
public actor SimulatedHeartRateStrap: SimulatedPeripheral {
    public nonisolated let advertisement: SimulatedAdvertisement
    public nonisolated let services: [SimulatedService]
    public nonisolated let deviceName: String

    private let rate: SimulatedRate
    private let time: TimeSource
    private let wideHeartRate: Bool
    private let location: BodySensorLocation
    private let information: SimulatedDeviceInformation
    private var signal: HeartRateSignal
    private var battery: SimulatedBattery

    static let measurementUUID = BluetoothUUID(GATTUUID.Characteristic.heartRateMeasurement)
    static let locationUUID = BluetoothUUID(GATTUUID.Characteristic.bodySensorLocation)
    static let controlPointUUID = BluetoothUUID(GATTUUID.Characteristic.heartRateControlPoint)
    /// Heart Rate Service 1.0, 3.3.1: "Control Point value not supported".
    static let controlPointNotSupported = ATTError.application(0x80)

    static let locations: [String: BodySensorLocation] = [
        "other": .other, "chest": .chest, "wrist": .wrist, "finger": .finger, "hand": .hand, "ear_lobe": .earLobe,
        "foot": .foot,
    ]

    public init(_ configuration: SimulatedDeviceConfiguration) throws(SimulatedDeviceConfigurationError) {
        var options = SimulationOptionReader(configuration.options)
        rate = try SimulatedRate(reading: &options, default: 1)
        time = configuration.time
        let settings = HeartRateSignal.Settings(
            restingBPM: try options.double("bpm", default: 72, in: 30...220),
            contact: try options.bool("contact", default: true),
            reportsRRIntervals: try options.bool("rr_intervals", default: true),
            reportsEnergyExpended: try options.bool("energy_expended", default: true))
        wideHeartRate = try options.bool("wide_heart_rate", default: false)
        let locationName = try options.string("body_sensor_location", default: "chest",
                                              allowed: Self.locations.keys.sorted())
        location = Self.locations[locationName] ?? .chest
        battery = try SimulatedBattery(reading: &options, defaultLevel: 85)
        information = try SimulatedDeviceInformation(reading: &options, defaultModel: "HRS-1", seed: configuration.seed)
        try options.rejectUnknownKeys()

        var seeds = SimulationRandom(seed: configuration.seed)
        signal = HeartRateSignal(settings: settings, seed: seeds.next())
        let name = configuration.name ?? "HRS-1 \(String(format8: configuration.seed).suffix(4))"
        deviceName = name
        advertisement = SimulatedAdvertisement(
            localName: name, serviceUUIDs: [BluetoothUUID(GATTUUID.Service.heartRate)],
            appearance: 0x0341, // Heart Rate Sensor: Heart Rate Belt
            txPower: nil, rssi: -58)
        services = [
            SimulatedService(BluetoothUUID(GATTUUID.Service.heartRate), characteristics: [
                SimulatedCharacteristic(Self.measurementUUID, flags: .notify),
                SimulatedCharacteristic(Self.locationUUID, flags: .read, initialValue: location.encode()),
                SimulatedCharacteristic(Self.controlPointUUID, flags: .write),
            ]),
            battery.service,
            information.service,
        ]
    }

    public func run(on link: any PeripheralLink) async {
        var schedule = TickSchedule(interval: rate.interval, time: time)
        while await schedule.waitForNextTick() {
            if let measurement = try? signal.next(after: rate.seconds) {
                await link.notify(Self.measurementUUID, value: measurement.encode(alwaysUInt16: wideHeartRate))
            }
            if battery.drain(for: rate.seconds) {
                await link.notify(SimulatedBattery.levelUUID, value: battery.encoded)
            }
        }
    }

    public func read(_ characteristic: BluetoothUUID) async throws(ATTError) -> [UInt8] {
        switch characteristic {
        case Self.locationUUID: return location.encode()
        case SimulatedBattery.levelUUID: return battery.encoded
        default:
            guard let value = information.value(of: characteristic) else { throw .readNotPermitted }
            return value
        }
    }

    public func write(_ characteristic: BluetoothUUID, value: [UInt8], kind: WriteKind) async throws(ATTError) {
        guard characteristic == Self.controlPointUUID else { throw .writeNotPermitted }
        do {
            switch try HeartRateControlPointCommand.decode(value) {
            case .resetEnergyExpended: signal.resetEnergyExpended()
            }
        } catch {
            throw Self.controlPointNotSupported
        }
    }

    public func handle(_ event: DeviceEvent, link: (any PeripheralLink)?) async -> Bool { false }
}

extension SimulatedDeviceKind {
    public static let heartRateStrap = SimulatedDeviceKind(
        name: "heart_rate_strap", summary: "chest strap: Heart Rate 0x180D, Battery, Device Information"
    ) { configuration throws(SimulatedDeviceConfigurationError) in try SimulatedHeartRateStrap(configuration) }
}
