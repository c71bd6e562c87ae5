import EventLoop
import Wearables

/// A health thermometer: Health Thermometer Service 0x1809 (Temperature Measurement 0x2A1C *indicated*, with the
/// temperature type inside; Temperature Type 0x2A1D readable) and Device Information 0x180A.
///
/// Options: `rate_hz` (0.2: a measurement every five seconds), `temperature_c` (36.8), `unit` (celsius or
/// fahrenheit), `temperature_type` (armpit), and the Device Information strings.
public actor SimulatedThermometer: SimulatedPeripheral {
    public nonisolated let advertisement: SimulatedAdvertisement
    public nonisolated let services: [SimulatedService]
    public nonisolated let deviceName: String

    private let rate: SimulatedRate
    private let time: TimeSource
    private let unit: TemperatureMeasurement.Unit
    private let type: TemperatureType
    private let information: SimulatedDeviceInformation
    private var temperature: SlowlyVaryingValue
    private var random: SimulationRandom

    static let measurementUUID = BluetoothUUID(GATTUUID.Characteristic.temperatureMeasurement)
    /// Temperature Type (0x2A1D; not in `GATTUUID` because the gateway reads it from the measurement).
    static let typeUUID = BluetoothUUID(0x2A1D)

    static let types: [String: TemperatureType] = [
        "armpit": .armpit, "body": .body, "ear": .ear, "finger": .finger,
        "gastrointestinal_tract": .gastrointestinalTract, "mouth": .mouth, "rectum": .rectum, "toe": .toe,
        "tympanum": .tympanum,
    ]

    public init(_ configuration: SimulatedDeviceConfiguration) throws(SimulatedDeviceConfigurationError) {
        var options = SimulationOptionReader(configuration.options)
        rate = try SimulatedRate(reading: &options, default: 0.2)
        time = configuration.time
        let celsius = try options.double("temperature_c", default: 36.8, in: 30...43)
        unit = try options.string("unit", default: "celsius", allowed: ["celsius", "fahrenheit"]) == "fahrenheit"
            ? .fahrenheit : .celsius
        type = Self.types[try options.string("temperature_type", default: "armpit", allowed: Self.types.keys.sorted())]
            ?? .armpit
        information = try SimulatedDeviceInformation(reading: &options, defaultModel: "THM-1", seed: configuration.seed)
        try options.rejectUnknownKeys()

        var seeds = SimulationRandom(seed: configuration.seed)
        random = seeds.split()
        temperature = SlowlyVaryingValue(start: celsius, step: 0.04, pull: 0.05, limits: (celsius - 1.5)...(celsius + 1.5))
        let name = configuration.name ?? "THM-1 \(String(format8: configuration.seed).suffix(4))"
        deviceName = name
        advertisement = SimulatedAdvertisement(
            localName: name, serviceUUIDs: [BluetoothUUID(GATTUUID.Service.healthThermometer)],
            appearance: 0x0300, // Thermometer (generic)
            rssi: -64)
        services = [
            SimulatedService(BluetoothUUID(GATTUUID.Service.healthThermometer), characteristics: [
                SimulatedCharacteristic(Self.measurementUUID, flags: .indicate),
                SimulatedCharacteristic(Self.typeUUID, flags: .read, initialValue: [type.rawValue]),
            ]),
            information.service,
        ]
    }

    /// The next reading in the configured unit, 0.01 resolution.
    private func nextMeasurement() -> TemperatureMeasurement? {
        let celsius = temperature.advance(using: &random)
        let reading = unit == .celsius ? celsius : celsius * 9 / 5 + 32
        guard let value = try? MedicalFloat32(reading, exponent: -2) else { return nil }
        return TemperatureMeasurement(temperature: value, unit: unit, temperatureType: type)
    }

    public func run(on link: any PeripheralLink) async {
        var schedule = TickSchedule(interval: rate.interval, time: time)
        while await schedule.waitForNextTick() {
            if let measurement = nextMeasurement() {
                await link.indicate(Self.measurementUUID, value: measurement.encode())
            }
        }
    }

    public func read(_ characteristic: BluetoothUUID) async throws(ATTError) -> [UInt8] {
        if characteristic == Self.typeUUID { return [type.rawValue] }
        guard let value = information.value(of: characteristic) else { throw .readNotPermitted }
        return value
    }

    public func write(_ characteristic: BluetoothUUID, value: [UInt8], kind: WriteKind) async throws(ATTError) {
        throw .writeNotPermitted
    }

    public func handle(_ event: DeviceEvent, link: (any PeripheralLink)?) async -> Bool { false }
}

extension SimulatedDeviceKind {
    public static let thermometer = SimulatedDeviceKind(
        name: "thermometer", summary: "Health Thermometer 0x1809 with indications, Device Information"
    ) { configuration throws(SimulatedDeviceConfigurationError) in try SimulatedThermometer(configuration) }
}
