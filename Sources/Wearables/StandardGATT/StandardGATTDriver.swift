import BlueZ
import FoundationEssentials
import Logging
import Synchronization

/// The driver for commodity devices that speak the Bluetooth SIG profiles: heart-rate straps, thermometers,
/// pulse oximeters, key finders, running and cycling sensors. It serves whatever standard services a device
/// has, so one strap with Heart Rate, Battery and Device Information gets all three.
public final class StandardGATTDriver: WearableDriver {

    /// The services this driver serves: any one of them in an advertisement makes a device ours.
    package static let servedServices: [UInt16] = [
        GATTUUID.Service.heartRate, GATTUUID.Service.healthThermometer, GATTUUID.Service.pulseOximeter,
        GATTUUID.Service.immediateAlert, GATTUUID.Service.runningSpeedAndCadence,
        GATTUUID.Service.cyclingSpeedAndCadence, GATTUUID.Service.battery,
    ]

    public static func match(_ device: Advertisement) -> DriverMatch? {
        let advertised = Set(device.serviceUUIDs.compactMap(GATTUUID.shortForm(of:)))
        return servedServices.contains(where: advertised.contains) ? .generic : nil
    }

    private let configuration: DriverConfiguration
    private let cycling = Mutex(CyclingSpeedCadenceCalculator())

    public init(configuration: DriverConfiguration) {
        self.configuration = configuration
    }

    private static func uuid(_ short: UInt16) -> String { GATTUUID.string(for: short) }

    // MARK: Session

    public func session(_ link: DeviceLink) async throws {
        await readInformation(link)
        if let time = link.characteristic(Self.uuid(GATTUUID.Characteristic.currentTime)), time.flags.contains("write") {
            _ = try? await execute(.timeSync, link: link)
        }
        cycling.withLock { $0.reset() }
        let streams: [(UInt16, @Sendable ([UInt8], DeviceLink) -> Void)] = [
            (GATTUUID.Characteristic.heartRateMeasurement, heartRate),
            (GATTUUID.Characteristic.temperatureMeasurement, temperature),
            (GATTUUID.Characteristic.plxContinuousMeasurement, pulseOximeterContinuous),
            (GATTUUID.Characteristic.plxSpotCheckMeasurement, pulseOximeterSpotCheck),
            (GATTUUID.Characteristic.rscMeasurement, running),
            (GATTUUID.Characteristic.cscMeasurement, cyclingMeasurement),
            (GATTUUID.Characteristic.batteryLevel, battery),
        ]
        let handlers = streams.compactMap { uuid, handle -> NotificationHandler? in
            guard let characteristic = link.characteristic(Self.uuid(uuid)), characteristic.canNotify else { return nil }
            return NotificationHandler(characteristic) { handle($0, link) }
        }
        try await link.runSession(handlers)
    }

    /// Device Information strings, battery, body sensor location: what the retained state shows.
    private func readInformation(_ link: DeviceLink) async {
        var state = await link.readDeviceInformationStrings()
        if let characteristic = link.characteristic(Self.uuid(GATTUUID.Characteristic.batteryLevel)),
           let bytes = try? await link.read(characteristic), let level = try? BatteryLevel.decode(bytes) {
            state["battery"] = .integer(Int64(level.percent))
        }
        if let characteristic = link.characteristic(Self.uuid(GATTUUID.Characteristic.bodySensorLocation)),
           let bytes = try? await link.read(characteristic), let location = try? BodySensorLocation.decode(bytes) {
            state["body_sensor_location"] = .text(location.name)
        }
        if !state.isEmpty { link.emit(.state(state)) }
    }

    // MARK: Notifications → events (pure but for `emit`)

    private func decodeFailed(_ what: String, _ bytes: [UInt8], _ error: GATTCodecError, _ link: DeviceLink) {
        link.logger.debug("malformed \(what) notification dropped", metadata: ["bytes": "\(bytes)", "error": "\(error)"])
    }

    @Sendable private func heartRate(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let measurement = try HeartRateMeasurement.decode(bytes)
            link.emit(.sample(SensorSample(
                sensor: .heartRate, timestamp: link.now,
                reading: .heartRate(bpm: measurement.bpm, contact: measurement.contact,
                                    energyExpendedKJ: measurement.energyExpendedKJ,
                                    rrIntervalsMilliseconds: measurement.rrIntervalsMilliseconds))))
        } catch { decodeFailed("heart rate", bytes, error, link) }
    }

    @Sendable private func temperature(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let measurement = try TemperatureMeasurement.decode(bytes)
            guard let celsius = measurement.celsius else { return }
            link.emit(.sample(SensorSample(sensor: .temperature, timestamp: link.now, reading: .celsius(celsius))))
        } catch { decodeFailed("temperature", bytes, error, link) }
    }

    private func spo2(_ reading: SpO2PulseRate, _ link: DeviceLink) {
        // NaN while the finger is out of the probe: no sample rather than a fake number.
        guard let percent = reading.spo2.value.doubleValue else { return }
        link.emit(.sample(SensorSample(sensor: .spo2, timestamp: link.now,
                                       reading: .spo2(percent: percent, pulseBPM: reading.pulseRate.value.doubleValue))))
    }

    @Sendable private func pulseOximeterContinuous(_ bytes: [UInt8], _ link: DeviceLink) {
        do { spo2(try PLXContinuousMeasurement.decode(bytes).normal, link) } catch { decodeFailed("PLX continuous", bytes, error, link) }
    }

    /// A completed spot check is a measurement and something the user did: the sample, and a `spot_check` event
    /// with its result for automations.
    @Sendable private func pulseOximeterSpotCheck(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let reading = try PLXSpotCheckMeasurement.decode(bytes).reading
            spo2(reading, link)
            var details: [String: DeviceValue] = [:]
            if let percent = reading.spo2.value.doubleValue { details["spo2"] = .number(percent) }
            if let pulse = reading.pulseRate.value.doubleValue { details["pulse_bpm"] = .number(pulse) }
            link.emit(.event(name: "spot_check", timestamp: link.now, details: details))
        } catch {
            decodeFailed("PLX spot-check", bytes, error, link)
        }
    }

    @Sendable private func running(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let measurement = try RunningSpeedCadenceMeasurement.decode(bytes)
            link.emit(.sample(SensorSample(sensor: .running, timestamp: link.now, reading: .running(
                speedMetresPerSecond: measurement.speedMetresPerSecond,
                cadenceStepsPerMinute: Int(measurement.cadenceStepsPerMinute),
                strideMetres: measurement.strideLengthMetres, totalDistanceMetres: measurement.totalDistanceMetres,
                isRunning: measurement.isRunning))))
        } catch { decodeFailed("running speed and cadence", bytes, error, link) }
    }

    @Sendable private func cyclingMeasurement(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let measurement = try CyclingSpeedCadenceMeasurement.decode(bytes)
            let derived = cycling.withLock { $0.update(with: measurement) }
            link.emit(.sample(SensorSample(sensor: .cycling, timestamp: link.now, reading: .cycling(
                wheelRevolutions: measurement.wheel?.cumulativeRevolutions,
                crankRevolutions: measurement.crank?.cumulativeRevolutions,
                speedMetresPerSecond: derived.speedMetresPerSecond, cadenceRPM: derived.cadenceRPM))))
        } catch { decodeFailed("cycling speed and cadence", bytes, error, link) }
    }

    @Sendable private func battery(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            link.emit(.state(["battery": .integer(Int64(try BatteryLevel.decode(bytes).percent))]))
        } catch { decodeFailed("battery", bytes, error, link) }
    }

    // MARK: Commands

    public func execute(_ command: DeviceCommand, link: DeviceLink) async throws(CommandError) -> DeviceValue {
        switch command {
        case .refresh:
            await readInformation(link)
            return .object([:])
        case .find(let vibrations, let level):
            return try await link.immediateAlert(vibrations: vibrations, level: level)
        case .timeSync:
            try await link.writeCurrentTime()
            return .object([:])
        case .named("reset_energy_expended", _):
            guard let point = link.characteristic(Self.uuid(GATTUUID.Characteristic.heartRateControlPoint)) else {
                throw CommandError(.notSupported, "this device has no Heart Rate Control Point")
            }
            try await link.write(point, HeartRateControlPointCommand.resetEnergyExpended.encode(), withResponse: true)
            return .object([:])
        default:
            throw CommandError(.notSupported, "\(command.name) is not supported by standard Bluetooth devices")
        }
    }
}

extension BodySensorLocation {
    /// snake_case for the device state.
    package var name: String {
        switch self {
        case .other: "other"
        case .chest: "chest"
        case .wrist: "wrist"
        case .finger: "finger"
        case .hand: "hand"
        case .earLobe: "ear_lobe"
        case .foot: "foot"
        case .unknown(let value): "unknown_\(value)"
        }
    }
}
