import EventLoop
import Foundation
import Wearables

/// A Polar sensor as a central sees it (`polar_h10`, `polar_verity_sense`): Heart Rate 0x180D, Battery 0x180F,
/// Device Information 0x180A and the Polar Measurement Data service (`PolarUUID`), built on the Polar codecs
/// the driver decodes with. The actor only schedules; `PolarPMDEngine` answers the control point and makes the
/// frames, `PolarHeartSignal` and `PolarWalkingMotion` are the body wearing it.
///
/// Advertising: "Polar H10 <id>" / "Polar Sense <id>" (the SDK's name rule), the Heart Rate service and the PMD
/// service. The control point is read (the feature bitmap), write and indicate; responses are indicated a
/// moment after the write is answered. Heart Rate Measurement is notified once a second (with the RR intervals
/// of the beats since the last one on the H10); data frames every 50 ms while a stream runs. When the link
/// drops every stream stops, as a Polar sensor's do.
///
/// Options: `bpm` (60, the mean rate of the simulated heart), `rr_variation` (0.03: each interval within ±3 % of
/// the mean), faults `start_error` (a `PMDResponseStatus` number every start is answered with), `start_error_sensor`
/// (`ecg`, `ppg`, `accelerometer`, `ppi`, `gyroscope`, `magnetometer`: only that stream's starts fail),
/// `minimum_mtu` (23: a start on a link with a smaller ATT MTU is answered `invalidMTU`, 10), `battery`,
/// `battery_drain_per_hour`, and the Device Information strings. The H10 adds on-device recording over PSFTP
/// (`SimulatedPolarSensor+FileTransfer.swift`) with `recording_speed` and the faults `psftp_drop_after_frames` and `psftp_silent`.
public actor SimulatedPolarSensor: SimulatedPeripheral {
    public nonisolated let advertisement: SimulatedAdvertisement
    public nonisolated let services: [SimulatedService]
    public nonisolated let deviceName: String

    static let heartRateUUID = BluetoothUUID(GATTUUID.Characteristic.heartRateMeasurement)
    static let controlPointUUID = BluetoothUUID(string: PolarUUID.Characteristic.measurementControlPoint)!
    static let dataUUID = BluetoothUUID(string: PolarUUID.Characteristic.measurementData)!
    /// How long after a write the response is indicated.
    static let responseDelay = Duration.milliseconds(5)
    static let frameInterval = Duration.milliseconds(50)

    let model: PolarSimulatedModel
    let time: TimeSource
    private let faults: PolarPMDEngine.Faults
    private let meanBPM: Double
    private let variation: Double
    private let information: SimulatedDeviceInformation
    private var battery: SimulatedBattery
    private var seeds: SimulationRandom
    private var connection: Connection?
    private var connectionCount = 0
    /// The H10's recordings; nil on a model without them. Lives across connections: the strap records alone.
    var fileTransfer: PolarPSFTPEngine?
    let fileTransferFaults: FileTransferFaults
    /// When the device's recording clock started, and how much faster than real time it runs.
    let recordingClockStart: ContinuousClock.Instant
    let recordingSpeed: Double

    private struct Connection {
        let id: Int
        let link: any PeripheralLink
        let start: ContinuousClock.Instant
        var engine: PolarPMDEngine
        var heart: PolarHeartSignal
        /// Heart-rate notifications sent up to this time (seconds since the start).
        var heartRateSentThrough = 0.0
    }

    init(_ configuration: SimulatedDeviceConfiguration, model: PolarSimulatedModel) throws(SimulatedDeviceConfigurationError) {
        self.model = model
        time = configuration.time
        recordingClockStart = configuration.time.now
        var options = SimulationOptionReader(configuration.options)
        meanBPM = try options.double("bpm", default: 60, in: 30...200)
        variation = try options.double("rr_variation", default: 0.03, in: 0...0.2)
        var faults = PolarPMDEngine.Faults()
        let startError = try options.int("start_error", default: 0, in: 0...255)
        faults.startError = startError == 0 ? nil : UInt8(startError)
        let sensor = try options.string("start_error_sensor", default: "all",
                                        allowed: ["all"] + PolarStream.allCases.map(\.rawValue))
        faults.startErrorType = PolarStream(rawValue: sensor)?.measurementType
        faults.minimumMTU = try options.int("minimum_mtu", default: 23, in: 23...517)
        self.faults = faults
        recordingSpeed = try options.double("recording_speed", default: 1, in: 1...3600)
        fileTransferFaults = FileTransferFaults(dropAfterFrames: try options.int("psftp_drop_after_frames", default: 0, in: 0...1000),
                                                silent: try options.bool("psftp_silent", default: false))
        battery = try SimulatedBattery(reading: &options, defaultLevel: 90)
        var information = try SimulatedDeviceInformation(reading: &options, defaultModel: model.model, seed: configuration.seed)
        information.manufacturer = try options.string("manufacturer", default: "Polar Electro Oy")
        self.information = information
        try options.rejectUnknownKeys()

        seeds = SimulationRandom(seed: configuration.seed)
        if model.recordsOnDevice {
            fileTransfer = PolarPSFTPEngine(meanBPM: meanBPM, variation: variation, seed: seeds.next())
        }
        let name = configuration.name ?? "Polar \(model.model) \(information.serial)"
        deviceName = name
        advertisement = SimulatedAdvertisement(
            localName: name, serviceUUIDs: [BluetoothUUID(GATTUUID.Service.heartRate), BluetoothUUID(string: PolarUUID.Service.measurementData)!],
            rssi: -60)
        services = [
            SimulatedService(BluetoothUUID(GATTUUID.Service.heartRate), characteristics: [
                SimulatedCharacteristic(Self.heartRateUUID, flags: .notify),
            ]),
            battery.service,
            information.service,
            SimulatedService(BluetoothUUID(string: PolarUUID.Service.measurementData)!, characteristics: [
                SimulatedCharacteristic(Self.controlPointUUID, flags: [.read, .write, .indicate], initialValue: model.features.encode()),
                SimulatedCharacteristic(Self.dataUUID, flags: .notify),
            ]),
        ] + (model.recordsOnDevice ? [Self.fileTransferService] : [])
    }

    /// Whether a central is connected (the behaviour is running).
    var isConnected: Bool { connection != nil }

    /// The streams running on the current connection (for tests).
    var runningTypes: [PMDMeasurementType] { connection?.engine.runningTypes ?? [] }

    public func inspect() async -> [String: String] {
        var shown = ["bpm": "\(meanBPM)", "running": runningTypes.map { "\($0)" }.joined(separator: ",")]
        shown.merge(recordingInspection()) { $1 }
        return shown
    }

    // MARK: Connection

    public func run(on link: any PeripheralLink) async {
        let id = connect(link)
        var schedule = TickSchedule(interval: Self.frameInterval, time: time)
        while await schedule.waitForNextTick() {
            guard await tick(connection: id) else { break }
        }
        disconnect(id)
    }

    private func connect(_ link: any PeripheralLink) -> Int {
        connectionCount += 1
        let origin = PMDSampleTiming.polarNanoseconds(fromUnixMilliseconds: time.unixMilliseconds) ?? 0
        fileTransfer?.connected()
        connection = Connection(id: connectionCount, link: link, start: time.now,
                                engine: PolarPMDEngine(model: model, faults: faults, clockOrigin: origin),
                                heart: PolarHeartSignal(meanBPM: meanBPM, variation: variation, seed: seeds.next()))
        return connectionCount
    }

    private func disconnect(_ id: Int) {
        guard connection?.id == id else { return }
        connection = nil
    }

    private func elapsed(_ connection: Connection) -> Double {
        let duration = time.now - connection.start
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// One frame interval: due data frames, the heart rate once a second, the battery when it drops.
    private func tick(connection id: Int) async -> Bool {
        guard var current = connection, current.id == id else { return false }
        let now = elapsed(current)
        current.heart.extend(through: now, keepingFrom: min(current.engine.oldestPending, current.heartRateSentThrough))
        let frames = current.engine.frames(through: now, mtu: current.link.mtu, heart: current.heart, motion: PolarWalkingMotion())
        var heartRate: [UInt8]?
        if now - current.heartRateSentThrough >= 1 {
            heartRate = heartRateMeasurement(current.heart, after: current.heartRateSentThrough, through: now)
            current.heartRateSentThrough = now
        }
        let drained = battery.drain(for: 0.05)
        connection = current
        let link = current.link
        if !frames.isEmpty { _ = await link.notify(Self.dataUUID, values: frames) }
        if let heartRate { await link.notify(Self.heartRateUUID, value: heartRate) }
        if drained { await link.notify(SimulatedBattery.levelUUID, value: battery.encoded) }
        return true
    }

    private func heartRateMeasurement(_ heart: PolarHeartSignal, after start: Double, through end: Double) -> [UInt8]? {
        let beats = heart.beats(after: start, through: end)
        let bpm = beats.last.map { Int((60 / $0.interval).rounded()) } ?? Int(meanBPM.rounded())
        let rr = model.heartRateHasRR ? beats.map { UInt16(clamping: Int(($0.interval * 1024).rounded())) } : []
        return (try? HeartRateMeasurement(bpm: bpm, contact: true, energyExpendedKJ: nil, rawRRIntervals: rr))?.encode()
    }

    // MARK: GATT

    public func read(_ characteristic: BluetoothUUID) async throws(ATTError) -> [UInt8] {
        switch characteristic {
        case Self.controlPointUUID: return model.features.encode()
        case SimulatedBattery.levelUUID: return battery.encoded
        default:
            guard let value = information.value(of: characteristic) else { throw .readNotPermitted }
            return value
        }
    }

    public func write(_ characteristic: BluetoothUUID, value: [UInt8], kind: WriteKind) async throws(ATTError) {
        if characteristic == Self.fileTransferMTUUUID, fileTransfer != nil { return fileTransferWrite(value) }
        guard characteristic == Self.controlPointUUID else { throw .writeNotPermitted }
        guard var current = connection else { return }
        let response = current.engine.handle(value, at: elapsed(current), mtu: current.link.mtu)
        connection = current
        let id = current.id
        let link = current.link
        Task {
            try? await time.sleep(for: Self.responseDelay)
            for part in PolarPMDEngine.parts(of: response, mtu: link.mtu) {
                guard self.isCurrent(id) else { return }
                await link.indicate(Self.controlPointUUID, value: part)
            }
        }
    }

    func isCurrent(_ id: Int) -> Bool { connection?.id == id }

    /// The current connection's id and link, for the file-transfer side.
    var currentLink: (id: Int, link: any PeripheralLink)? { connection.map { ($0.id, $0.link) } }

    /// `button_press` stands for the sensor taken off: it stops every stream and says so on the control point
    /// (the "measurement stopped" notice), as the SDK's `processPmdCpCommand` expects it.
    public func handle(_ event: DeviceEvent, link: (any PeripheralLink)?) async -> Bool {
        guard event == .buttonPress else { return false }
        guard var current = connection else { return true }
        let stopped = current.engine.runningTypes
        current.engine.stopAll()
        connection = current
        if !stopped.isEmpty {
            await current.link.indicate(Self.controlPointUUID,
                                        value: PMDControlPointNotice.measurementsStopped(stopped.map(\.rawValue)).encode())
        }
        return true
    }
}

extension SimulatedDeviceKind {
    public static let polarH10 = SimulatedDeviceKind(
        name: "polar_h10", summary: "Polar H10 chest strap: heart rate with RR, PMD ECG 130 Hz and acceleration 25–200 Hz"
    ) { configuration throws(SimulatedDeviceConfigurationError) in try SimulatedPolarSensor(configuration, model: .h10) }

    public static let polarVeritySense = SimulatedDeviceKind(
        name: "polar_verity_sense", summary: "Polar Verity Sense: heart rate, PMD PPG, PPI, acceleration, gyroscope, magnetometer"
    ) { configuration throws(SimulatedDeviceConfigurationError) in try SimulatedPolarSensor(configuration, model: .veritySense) }
}
