import EventLoop
import Wearables

/// A fingertip pulse oximeter: Pulse Oximeter Service 0x1822 (PLX Continuous Measurement 0x2A5F notified at
/// `rate_hz`, PLX Spot-check Measurement 0x2A5E indicated when the user takes a spot check, PLX Features 0x2A60)
/// and Device Information 0x180A.
///
/// Options: `rate_hz` (1), `spo2` (97 %), `pulse_rate` (68 bpm), and the Device Information strings. The device
/// events `spot_check` and `button_press` take a spot check.
public actor SimulatedPulseOximeter: SimulatedPeripheral {
    public nonisolated let advertisement: SimulatedAdvertisement
    public nonisolated let services: [SimulatedService]
    public nonisolated let deviceName: String

    private let rate: SimulatedRate
    private let time: TimeSource
    private let information: SimulatedDeviceInformation
    private var spo2: SlowlyVaryingValue
    private var pulse: SlowlyVaryingValue
    private var random: SimulationRandom

    static let continuousUUID = BluetoothUUID(GATTUUID.Characteristic.plxContinuousMeasurement)
    static let spotCheckUUID = BluetoothUUID(GATTUUID.Characteristic.plxSpotCheckMeasurement)
    /// PLX Features (0x2A60): supported features u16, none of the optional fields.
    static let featuresUUID = BluetoothUUID(0x2A60)
    static let features: [UInt8] = [0x00, 0x00]

    public init(_ configuration: SimulatedDeviceConfiguration) throws(SimulatedDeviceConfigurationError) {
        var options = SimulationOptionReader(configuration.options)
        rate = try SimulatedRate(reading: &options, default: 1)
        time = configuration.time
        let saturation = try options.double("spo2", default: 97, in: 70...100)
        let pulseRate = try options.double("pulse_rate", default: 68, in: 30...220)
        information = try SimulatedDeviceInformation(reading: &options, defaultModel: "PLX-1", seed: configuration.seed)
        try options.rejectUnknownKeys()

        var seeds = SimulationRandom(seed: configuration.seed)
        random = seeds.split()
        spo2 = SlowlyVaryingValue(start: saturation, step: 0.3, pull: 0.1, limits: max(70, saturation - 3)...min(100, saturation + 2))
        pulse = SlowlyVaryingValue(start: pulseRate, step: 1, pull: 0.08,
                                   limits: max(30, pulseRate - 20)...min(220, pulseRate + 30))
        let name = configuration.name ?? "PLX-1 \(String(format8: configuration.seed).suffix(4))"
        deviceName = name
        advertisement = SimulatedAdvertisement(
            localName: name, serviceUUIDs: [BluetoothUUID(GATTUUID.Service.pulseOximeter)],
            appearance: 0x0C41, // Pulse Oximeter: Fingertip
            rssi: -61)
        services = [
            SimulatedService(BluetoothUUID(GATTUUID.Service.pulseOximeter), characteristics: [
                SimulatedCharacteristic(Self.spotCheckUUID, flags: .indicate),
                SimulatedCharacteristic(Self.continuousUUID, flags: .notify),
                SimulatedCharacteristic(Self.featuresUUID, flags: .read, initialValue: Self.features),
            ]),
            information.service,
        ]
    }

    /// SpO2 and pulse rate, whole numbers as fingertip oximeters show them.
    private func nextReading() -> SpO2PulseRate? {
        let saturation = spo2.advance(using: &random).rounded()
        let rate = pulse.advance(using: &random).rounded()
        guard let spo2Value = try? MedicalFloat16(saturation, exponent: 0),
              let pulseValue = try? MedicalFloat16(rate, exponent: 0) else { return nil }
        return SpO2PulseRate(spo2: spo2Value, pulseRate: pulseValue)
    }

    public func run(on link: any PeripheralLink) async {
        var schedule = TickSchedule(interval: rate.interval, time: time)
        while await schedule.waitForNextTick() {
            if let reading = nextReading(), let measurement = try? PLXContinuousMeasurement(normal: reading) {
                await link.notify(Self.continuousUUID, value: measurement.encode())
            }
        }
    }

    public func read(_ characteristic: BluetoothUUID) async throws(ATTError) -> [UInt8] {
        if characteristic == Self.featuresUUID { return Self.features }
        guard let value = information.value(of: characteristic) else { throw .readNotPermitted }
        return value
    }

    public func write(_ characteristic: BluetoothUUID, value: [UInt8], kind: WriteKind) async throws(ATTError) {
        throw .writeNotPermitted
    }

    public func handle(_ event: DeviceEvent, link: (any PeripheralLink)?) async -> Bool {
        guard event == .spotCheck || event == .buttonPress else { return false }
        if let link, let reading = nextReading(), let measurement = try? PLXSpotCheckMeasurement(reading: reading) {
            await link.indicate(Self.spotCheckUUID, value: measurement.encode())
        }
        return true
    }
}

extension SimulatedDeviceKind {
    public static let pulseOximeter = SimulatedDeviceKind(
        name: "pulse_oximeter", summary: "Pulse Oximeter 0x1822, continuous and spot-check, Device Information"
    ) { configuration throws(SimulatedDeviceConfigurationError) in try SimulatedPulseOximeter(configuration) }
}
