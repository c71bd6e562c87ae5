import BlueZ
import Logging
import Synchronization

/// The driver for Polar sensors (H10, H9, Verity Sense, OH1): standard heart rate with RR intervals, battery and
/// device information, and the Polar Measurement Data service (docs/protocols/polar.md).
///
/// On every connection it reads the PMD feature bitmap and, for each stream the device offers, the settings it
/// lists; both go into the state (`capabilities`), so a user sees what `request/configure` may ask for. The
/// streams asked for are kept for the device's lifetime and started again after every reconnect (a Polar sensor
/// stops them when the link drops). Requests are checked against the device's own lists before anything is
/// written; a refusal on the control point is the contract's error with `vendor_code` = Polar's status number.
///
/// On an H10 it also drives the strap's own recording over PSFTP (`request/recording`, PolarDriver+Recording.swift).
/// The device clock, other models' offline recordings and SDK mode are not offered (docs/protocols/polar.md,
/// "Not supported").
public final class PolarDriver: WearableDriver {

    /// The SDK's name rule ("Polar <model> <id>") or the PMD service each make a likely match; both, certain.
    public static func match(_ device: Advertisement) -> DriverMatch? {
        let named = PolarUUID.model(fromAdvertisedName: device.name ?? device.alias ?? "") != nil
        let advertised = device.serviceUUIDs.contains { $0.lowercased() == PolarUUID.Service.measurementData }
        switch (named, advertised) {
        case (true, true): return .certain
        case (true, false), (false, true): return .likely
        case (false, false): return nil
        }
    }

    /// What holds for one connection.
    struct Connection {
        /// The settings each offered stream lists; nil until read.
        var offered: [PolarStream: PMDSettings]?
        /// What runs on the device now, as far as the driver started it.
        var running: [PolarStream: PMDSettingSelection] = [:]
        var decoder = PolarSampleDecoder()
        /// The Device Information model number and serial, as read at the start of the connection.
        var model: String?
        var serial: String?
    }

    let connection = Mutex(Connection())
    /// Wakes commands waiting for `offered` (true: read; false: the session ended).
    private let offeredReady = NotificationWaiters<Bool>()
    private let desired = Mutex(PolarStreamConfiguration())
    /// `devices[].configure`, checked against the device's settings on the first connection.
    private let initialRequest: Mutex<[String: DeviceValue]?>
    private let controlPoint = PolarControlPoint()
    let fileTransfer = PolarFileTransfer()
    /// Where the start times of the recordings this gateway started are kept (a recording's file has none).
    let storage: DriverStorage

    public init(configuration: DriverConfiguration) {
        initialRequest = Mutex(configuration.configure.isEmpty ? nil : configuration.configure)
        storage = configuration.storage
    }

    private static let heartRateMeasurement = GATTUUID.string(for: GATTUUID.Characteristic.heartRateMeasurement)

    // MARK: Session

    public func session(_ link: DeviceLink) async throws {
        connection.withLock { $0 = Connection() }
        defer { offeredReady.deliver(false) }
        controlPoint.reset()
        fileTransfer.reset()
        await readInformation(link)

        var notifications: [NotificationHandler] = []
        if let heartRate = link.characteristic(Self.heartRateMeasurement), heartRate.canNotify {
            notifications.append(NotificationHandler(heartRate) { [self] in self.heartRate($0, link) })
        }
        if let battery = link.batteryNotifications() { notifications.append(battery) }
        let pmd = pmdCharacteristics(link)
        if let pmd {
            notifications.append(NotificationHandler(pmd.controlPoint) { [self] in controlPointIndication($0, link) })
            notifications.append(NotificationHandler(pmd.data) { [self] in data($0, link) })
        } else {
            link.logger.info("no Polar Measurement Data service: heart rate only")
        }
        let recording = recordingCharacteristic(link)
        if let recording { notifications.append(NotificationHandler(recording) { [self] in fileTransfer.receive($0) }) }
        try await link.runSession(notifications) { [self] in
            if let pmd { await prepareStreams(pmd.controlPoint, link) }
            if recording != nil { await publishRecordingStatus(link) }
        }
    }

    private func pmdCharacteristics(_ link: DeviceLink) -> (controlPoint: GattCharacteristicInfo, data: GattCharacteristicInfo)? {
        guard let controlPoint = link.characteristic(service: PolarUUID.Service.measurementData,
                                                     PolarUUID.Characteristic.measurementControlPoint),
              let data = link.characteristic(service: PolarUUID.Service.measurementData, PolarUUID.Characteristic.measurementData),
              controlPoint.canNotify, data.canNotify else { return nil }
        return (controlPoint, data)
    }

    private func readInformation(_ link: DeviceLink) async {
        var state = await link.readDeviceInformationStrings()
        connection.withLock {
            $0.model = state["model"]?.text
            $0.serial = state["serial"]?.text
        }
        if let percent = await link.readBatteryPercent() { state["battery"] = .integer(Int64(percent)) }
        if !state.isEmpty { link.emit(.state(state)) }
    }

    /// The feature read and every offered stream's settings, published; then the streams asked for, started.
    private func prepareStreams(_ controlPoint: GattCharacteristicInfo, _ link: DeviceLink) async {
        let offered: [PolarStream: PMDSettings]
        do throws(CommandError) {
            offered = try await readOffered(controlPoint, link)
        } catch {
            link.logger.warning("could not read what the device streams", metadata: ["error": "\(error)"])
            link.emit(.event(name: "configuration_failed", timestamp: link.now,
                             details: ["code": .text(error.code.rawValue), "message": .text(error.message)]))
            connection.withLock { $0.offered = [:] }
            offeredReady.deliver(true)
            return
        }
        if let request = initialRequest.withLock({ $0 }) {
            initialRequest.withLock { $0 = nil }
            do throws(CommandError) {
                let configured = try desired.withLock { $0 }.applying(request, offered: offered)
                desired.withLock { $0 = configured }
            } catch {
                reportConfigurationFailure(error, link)
            }
        }
        connection.withLock { $0.offered = offered }
        offeredReady.deliver(true)
        let failure = await self.controlPoint.requests.run { [self] () async -> CommandError? in
            do throws(CommandError) {
                try await apply(desired.withLock { $0 }, controlPoint, link)
                return nil
            } catch {
                return error
            }
        }
        if let failure { reportConfigurationFailure(failure, link) }
    }

    private func reportConfigurationFailure(_ error: CommandError, _ link: DeviceLink) {
        link.logger.warning("could not start the configured streams", metadata: ["error": "\(error)"])
        var details: [String: DeviceValue] = ["code": .text(error.code.rawValue), "message": .text(error.message)]
        if let vendorCode = error.vendorCode { details["vendor_code"] = .integer(Int64(vendorCode)) }
        link.emit(.event(name: "configuration_failed", timestamp: link.now, details: details))
    }

    private func readOffered(_ characteristic: GattCharacteristicInfo, _ link: DeviceLink) async throws(CommandError) -> [PolarStream: PMDSettings] {
        let features: PMDFeatures
        do { features = try PMDFeatures.decode(try await link.read(characteristic)) } catch let error as CommandError {
            throw error
        } catch {
            throw CommandError(.internalError, "the PMD feature read could not be decoded: \(error)")
        }
        var offered: [PolarStream: PMDSettings] = [:]
        for stream in PolarStream.allCases where features.supportedTypes.contains(stream.measurementType) {
            let response = try await controlPoint.requests.run { [self] () async -> Result<PMDControlPointResponse, CommandError> in
                do throws(CommandError) {
                    return .success(try await self.controlPoint.exchange(.getSettings(stream.measurementType), on: characteristic, link: link))
                } catch {
                    return .failure(error)
                }
            }.get()
            guard response.isSuccess else {
                link.logger.info("the device lists no settings for an offered stream",
                                 metadata: ["stream": "\(stream.rawValue)", "status": "\(response.statusCode)"])
                continue
            }
            do { offered[stream] = try PMDSettings.decode(response.parameters) } catch {
                throw CommandError(.internalError, "the \(stream.rawValue) settings could not be decoded: \(error)")
            }
        }
        link.emit(.state(["capabilities": .object(["sensors": PolarStreamConfiguration.describe(offered: offered),
                                                   "recording": .flag(recordingCharacteristic(link) != nil)])]))
        return offered
    }

    // MARK: Starting and stopping streams

    /// Makes the device run exactly `wanted`: stops what should not run or runs with other settings, then starts
    /// what is missing. Stops first, so a restart with new settings is a stop and a start, as the device needs.
    private func apply(_ wanted: PolarStreamConfiguration, _ characteristic: GattCharacteristicInfo, _ link: DeviceLink) async throws(CommandError) {
        let running = connection.withLock { $0.running }
        for (stream, settings) in running.sorted(by: { $0.key < $1.key }) where wanted.enabled[stream] != settings {
            try await stop(stream, characteristic, link)
        }
        for (stream, settings) in wanted.enabled.sorted(by: { $0.key < $1.key }) where connection.withLock({ $0.running[stream] }) != settings {
            try await start(stream, settings, characteristic, link)
        }
        publishSensors(link)
    }

    private func start(_ stream: PolarStream, _ settings: PMDSettingSelection, _ characteristic: GattCharacteristicInfo,
                       _ link: DeviceLink) async throws(CommandError) {
        let type = stream.measurementType
        // Ready before the request: the first frame may come before the response.
        connection.withLock { $0.decoder.started(type, sampleRate: settings[.sampleRate] ?? 0, factor: nil) }
        let response = try await controlPoint.exchange(.start(type, settings: settings), on: characteristic, link: link)
        guard response.isSuccess || response.status == .alreadyInState else {
            connection.withLock { $0.decoder.stopped(type) }
            throw CommandError(pmdStatus: response.statusCode, request: "starting \(stream.rawValue)")
        }
        let factor = (try? PMDSettings.decode(response.parameters))?.factor
        connection.withLock {
            $0.decoder.started(type, sampleRate: settings[.sampleRate] ?? 0, factor: factor)
            $0.running[stream] = settings
        }
    }

    private func stop(_ stream: PolarStream, _ characteristic: GattCharacteristicInfo, _ link: DeviceLink) async throws(CommandError) {
        let response = try await controlPoint.exchange(.stop(stream.measurementType), on: characteristic, link: link)
        // Already stopped is what was wanted.
        guard response.isSuccess || response.status == .alreadyInState else {
            throw CommandError(pmdStatus: response.statusCode, request: "stopping \(stream.rawValue)")
        }
        connection.withLock {
            $0.decoder.stopped(stream.measurementType)
            $0.running[stream] = nil
        }
    }

    /// The state's `sensors`: every offered stream, running or not, with the settings it runs with.
    private func publishSensors(_ link: DeviceLink) {
        let (offered, running) = connection.withLock { ($0.offered, $0.running) }
        var sensors: [String: DeviceValue] = [:]
        for stream in (offered.map { Array($0.keys) } ?? []) + Array(running.keys) {
            sensors[stream.rawValue] = PolarStreamConfiguration.describe(running[stream])
        }
        link.emit(.state(["sensors": .object(sensors)]))
    }

    // MARK: Notifications

    private func decodeFailed(_ what: String, _ bytes: [UInt8], _ error: any Error, _ link: DeviceLink) {
        link.logger.debug("malformed \(what) notification dropped", metadata: ["bytes": "\(bytes)", "error": "\(error)"])
    }

    private func heartRate(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let measurement = try HeartRateMeasurement.decode(bytes)
            link.emit(.sample(SensorSample(
                sensor: .heartRate, timestamp: link.now,
                reading: .heartRate(bpm: measurement.bpm, contact: measurement.contact,
                                    energyExpendedKJ: measurement.energyExpendedKJ,
                                    rrIntervalsMilliseconds: measurement.rrIntervalsMilliseconds))))
        } catch { decodeFailed("heart rate", bytes, error, link) }
    }

    private func controlPointIndication(_ bytes: [UInt8], _ link: DeviceLink) {
        let stopped: [PMDMeasurementType]
        do { stopped = try controlPoint.receive(bytes) } catch {
            decodeFailed("PMD control point", bytes, error, link)
            return
        }
        guard !stopped.isEmpty else { return }
        // The device stopped streams on its own (taken off, low battery): they are no longer running, and are
        // started again at the next connection.
        let streams = stopped.compactMap(PolarStream.init)
        connection.withLock { state in
            for stream in streams {
                state.running[stream] = nil
                state.decoder.stopped(stream.measurementType)
            }
        }
        link.emit(.event(name: "measurement_stopped", timestamp: link.now,
                         details: ["sensors": .list(streams.map { .text($0.rawValue) })]))
        publishSensors(link)
    }

    private func data(_ bytes: [UInt8], _ link: DeviceLink) {
        let result = connection.withLock { state -> Result<[SensorSample], PolarSampleDecoder.Failure> in
            do throws(PolarSampleDecoder.Failure) {
                return .success(try state.decoder.decode(bytes))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let samples):
            for sample in samples { link.emit(.sample(sample)) }
        case .failure(let error):
            decodeFailed("PMD data", bytes, error, link)
        }
    }

    // MARK: Commands

    /// The settings the device offers once the session has read them; a command in the first moments of a
    /// connection waits for that rather than racing it.
    private func readyOffered(_ link: DeviceLink) async throws(CommandError) -> [PolarStream: PMDSettings] {
        if let offered = connection.withLock({ $0.offered }) { return offered }
        guard link.isConnected else { throw CommandError(.deviceDisconnected, "the device is not connected") }
        // Registered before the state is looked at again, so a read that lands in between is not missed.
        _ = await offeredReady.wait(timeout: .seconds(10), on: link.time, matches: { _ in true }) { [self] () async in
            if connection.withLock({ $0.offered }) != nil { offeredReady.deliver(true) }
        }
        if let offered = connection.withLock({ $0.offered }) { return offered }
        guard link.isConnected else { throw CommandError(.deviceDisconnected, "the device is not connected") }
        throw CommandError(.busy, "the device's session is still starting; try again in a moment")
    }

    public func execute(_ command: DeviceCommand, link: DeviceLink) async throws(CommandError) -> DeviceValue {
        switch command {
        case .configure(let request):
            guard let pmd = pmdCharacteristics(link) else {
                // A link that just dropped takes its GATT objects with it.
                guard link.isConnected else { throw CommandError(.deviceDisconnected, "the device is not connected") }
                throw CommandError(.notSupported, "this device has no Polar Measurement Data service")
            }
            let offered = try await readyOffered(link)
            let outcome = await controlPoint.requests.run { [self] () async -> Result<DeviceValue, CommandError> in
                do throws(CommandError) {
                    let next = try desired.withLock { $0 }.applying(request, offered: offered)
                    desired.withLock { $0 = next }
                    try await apply(next, pmd.controlPoint, link)
                    let running = connection.withLock { $0.running }
                    var sensors: [String: DeviceValue] = [:]
                    for stream in offered.keys { sensors[stream.rawValue] = PolarStreamConfiguration.describe(running[stream]) }
                    return .success(.object(["sensors": .object(sensors)]))
                } catch {
                    // What did start keeps running and is what the next connection starts again.
                    desired.withLock { $0 = PolarStreamConfiguration(enabled: connection.withLock { $0.running }) }
                    publishSensors(link)
                    return .failure(error)
                }
            }
            return try outcome.get()
        case .refresh:
            await readInformation(link)
            publishSensors(link)
            return .object([:])
        case .named("recording", let arguments):
            return try await recording(H10RecordingCommand(RequestReader(arguments)), link: link)
        default:
            throw CommandError(.notSupported, "\(command.name) is not supported by Polar sensors")
        }
    }
}
