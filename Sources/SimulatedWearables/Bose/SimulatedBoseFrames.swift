import EventLoop
import Wearables

/// Bose Frames audio sunglasses as a central sees their Bose Wearable sensor service 0xFDD2 (*documented*
/// protocol, Bose's SDK) and Device Information 0x180A. Bytes come from the `Bose` codecs the driver decodes with.
///
/// What the glasses offer, as real Frames do: all seven sensors at 20, 40, 80, 160 and 320 ms, at most
/// `max_active_sensors` of them at once, and the gestures double tap, head nod and head shake (no single tap).
/// `WearableDeviceInformation` is version 1.0, product 0x402C ("Frames" in Bose's SDK), variant 0x01 Alto or
/// 0x02 Rondo, a 20 ms transmission period, a budget of 160 bytes per transmission period (*chosen*: what eight
/// 20-byte notifications per 20 ms carry; no allowed configuration needs more than 3 × 15 bytes), status 0.
///
/// `SensorInformation` scales (*chosen*, each a symmetric raw range so that raw 0 is exactly 0):
/// - accelerometer: raw ±32767 ↔ ±16 g, in g as Bose's SDK documents it ("Sensors and Coordinate System": an
///   upright, still head reads about (0, 0, −1));
/// - gyroscope: raw ±32767 ↔ ±2000 °/s, degrees per second because Bose's SDK documents the gyroscope in °/s
///   and ±2000 °/s is the usual full scale of the MEMS gyroscopes in such glasses (an integer rad/s range would
///   be a coarse ±35);
/// - rotation and game rotation: raw ±16384 ↔ ±1 (the Q14 fixed point of sensor-hub quaternions); the rotation's
///   accuracy is scaled alike and means radians of heading uncertainty;
/// - orientation: raw ±32767 ↔ ±180°, x pitch, y roll, z heading from magnetic north (*modeled*);
/// - magnetometer and uncalibrated magnetometer: raw ±32767 ↔ ±1300 µT (a BMM150-class magnetometer's range).
/// Sample lengths are the record layouts' (7, 7, 10, 8, 7, 7, 12 bytes).
///
/// Behaviour:
/// - Every new connection starts with all sensors and gestures disabled, as the real device forgets its
///   configuration when the link drops.
/// - A write to `SensorConfiguration` replaces the whole configuration (sensors it does not list are
///   disabled) and is checked as a device would, changing nothing when refused. ATT application errors
///   (`invalidConfiguration` 0x80: length not a multiple of 3, an id the device does not have or listed twice;
///   `periodNotOffered` 0x81: a period other than 0 that the sensor does not offer; `periodsDiffer` 0x82: the
///   enabled sensors do not share one period; `tooManySensors` 0x83: more than `max_active_sensors` enabled).
///   `GestureConfiguration` likewise, 2-byte entries: 0x80 for an odd length or a gesture the device does not
///   have (or listed twice), `invalidGestureState` 0x84 for a state other than 0 or 1. (Over a real bluetoothd in
///   peripheral mode every application error arrives as 0x80.)
/// - An accepted configuration is notified in full about 10 ms after the write was answered (the device applies
///   it first), unless `confirm_configuration` is false.
/// - While sensors are enabled, every period `SensorData` carries one record per enabled sensor, all with the
///   same timestamp (milliseconds since the device booted, wrapping at 65536), split over several
///   notifications when they exceed `mtu − 3` bytes. A new period takes effect after the current one.
/// - Gestures are sent on `GestureData` only when enabled, as the device only detects enabled gestures. The
///   head motion shows the scripted nods and shakes and a knock for each tap whether or not they are reported.
///
/// Options: `variant` (alto or rondo), `max_active_sensors` (3, 1…7), `confirm_configuration` (true),
/// `gestures` (a script such as `"double_tap@5,head_nod@12.5"`: gesture name @ seconds after each connection;
/// default none), and the Device Information strings (`manufacturer` "Bose Corporation", `model` "Bose Frames
/// Alto" or "Bose Frames Rondo", `serial`, `hardware`, `firmware`, `software`). The device event `button_press`
/// is a double tap now.
///
/// Not modeled: a battery (Frames report none over this service), the sensor service being suspended (the
/// status stays 0, so `WearableDeviceInformation` is never notified), secure pairing, and a check of the payload
/// budget (no configuration within `max_active_sensors` can exceed it).
public actor SimulatedBoseFrames: SimulatedPeripheral {
    public nonisolated let advertisement: SimulatedAdvertisement
    public nonisolated let services: [SimulatedService]
    public nonisolated let deviceName: String

    /// Length not a multiple of the entry size, or an id the device does not have, or one listed twice.
    public static let invalidConfiguration = ATTError.application(0x80)
    /// A sensor period other than 0 that the sensor does not offer.
    public static let periodNotOffered = ATTError.application(0x81)
    /// The enabled sensors do not share one period.
    public static let periodsDiffer = ATTError.application(0x82)
    /// More sensors enabled than `maxActiveSensors`.
    public static let tooManySensors = ATTError.application(0x83)
    /// A gesture state other than 0x00 (off) or 0x01 (on).
    public static let invalidGestureState = ATTError.application(0x84)

    static let serviceUUID = BluetoothUUID(0xFDD2)
    static let deviceInformationUUID = uuid(BoseUUID.deviceInformation)
    static let sensorInformationUUID = uuid(BoseUUID.sensorInformation)
    static let sensorConfigurationUUID = uuid(BoseUUID.sensorConfiguration)
    static let sensorDataUUID = uuid(BoseUUID.sensorData)
    static let gestureInformationUUID = uuid(BoseUUID.gestureInformation)
    static let gestureConfigurationUUID = uuid(BoseUUID.gestureConfiguration)
    static let gestureDataUUID = uuid(BoseUUID.gestureData)

    /// Between answering a configuration write and notifying the configuration the device then runs.
    static let confirmationDelay = Duration.milliseconds(10)
    /// How often the device looks for a new configuration while no sensor is enabled: its transmission period.
    static let idleInterval: UInt16 = 20
    static let gestures: [BoseGesture] = [.doubleTap, .headNod, .headShake]
    static let variants: [String: (id: UInt8, model: String)] = [
        "alto": (0x01, "Bose Frames Alto"), "rondo": (0x02, "Bose Frames Rondo"),
    ]

    static let sensorInformation = BoseSensorInformation(entries: BoseSensor.allCases.map { sensor in
        let (scaled, raw): (Int16, Int16) = switch sensor {
        case .accelerometer: (16, 32767)
        case .gyroscope: (2000, 32767)
        case .rotation, .gameRotation: (1, 16384)
        case .orientation: (180, 32767)
        case .magnetometer, .uncalibratedMagnetometer: (1300, 32767)
        }
        return BoseSensorInformation.Entry(
            sensorID: sensor.rawValue, minimumScaled: -scaled, maximumScaled: scaled, minimumRaw: -raw, maximumRaw: raw,
            availablePeriodsMask: BoseSamplePeriod.mask(of: BoseSamplePeriod.allCases),
            sampleLength: UInt8(sensor.payloadLength))
    })

    let deviceInformation: BoseDeviceInformation
    nonisolated let gestureInformation: BoseGestureInformation
    private let information: SimulatedDeviceInformation
    private let maxActiveSensors: Int
    private let confirmsConfiguration: Bool
    private let script: [BoseGestureScript.Entry]
    private let time: TimeSource
    private let created: ContinuousClock.Instant
    /// The device's clock when the simulation started: it was switched on a while ago.
    private let bootMilliseconds: Int64

    /// What the device runs now; both are disabled again on every connection.
    private(set) var sensorConfiguration: BoseSensorConfiguration
    private(set) var gestureConfiguration: BoseGestureConfiguration
    private var motion: BoseHeadMotion
    /// How long the head has moved while connected, counted in ticks: the motion's time axis, so that the values
    /// follow from the seed and the configuration writes rather than from wall-clock jitter.
    private var motionMilliseconds: Int64 = 0
    private var connection: Connection?
    private var connectionCount = 0

    private struct Connection {
        let id: Int
        let link: any PeripheralLink
        let start: ContinuousClock.Instant
        /// The device clock when the link came up.
        let startDeviceMilliseconds: Int64
        let startMotionMilliseconds: Int64
    }

    public init(_ configuration: SimulatedDeviceConfiguration) throws(SimulatedDeviceConfigurationError) {
        var options = SimulationOptionReader(configuration.options)
        time = configuration.time
        created = configuration.time.now
        let variantName = try options.string("variant", default: "alto", allowed: Self.variants.keys.sorted())
        let variant = Self.variants[variantName] ?? (id: 0x01, model: "Bose Frames Alto")
        let maxActive = try options.int("max_active_sensors", default: 3, in: 1...BoseSensor.allCases.count)
        maxActiveSensors = maxActive
        confirmsConfiguration = try options.bool("confirm_configuration", default: true)
        script = try BoseGestureScript.parse(try options.string("gestures", default: ""), key: "gestures",
                                             available: Self.gestures)
        var information = try SimulatedDeviceInformation(reading: &options, defaultModel: variant.model, seed: configuration.seed)
        information.manufacturer = try options.string("manufacturer", default: "Bose Corporation")
        self.information = information
        try options.rejectUnknownKeys()

        var seeds = SimulationRandom(seed: configuration.seed)
        motion = BoseHeadMotion(seed: seeds.next())
        bootMilliseconds = Int64(seeds.next() % 3_600_000)
        let device = BoseDeviceInformation(
            majorVersion: 1, minorVersion: 0, productID: 0x402C, variant: variant.id,
            availableSensorsMask: BoseSensor.allCases.reduce(UInt32(0)) { $0 | 1 << UInt32($1.rawValue) },
            availableGesturesMask: Self.gestures.reduce(UInt32(0)) { $0 | $1.maskBit }, transmissionPeriodMilliseconds: 20,
            maxPayloadPerTransmissionPeriod: 160, maxActiveSensors: UInt8(maxActive), status: [])
        deviceInformation = device
        let gestures = BoseGestureInformation(entries: Self.gestures.map { .init(gestureID: $0.rawValue, configurationLength: 1) })
        gestureInformation = gestures
        sensorConfiguration = Self.disabledSensors
        gestureConfiguration = Self.disabledGestures

        let name = configuration.name ?? "Bose Frames \(String(format8: configuration.seed).suffix(4))"
        deviceName = name
        advertisement = SimulatedAdvertisement(
            localName: name, serviceUUIDs: [Self.serviceUUID],
            appearance: 0x01C0, // Eye-glasses (generic)
            rssi: -55)
        services = [
            SimulatedService(Self.serviceUUID, characteristics: [
                SimulatedCharacteristic(Self.deviceInformationUUID, flags: [.read, .notify], initialValue: device.encode()),
                SimulatedCharacteristic(Self.sensorInformationUUID, flags: .read, initialValue: Self.sensorInformation.encode()),
                SimulatedCharacteristic(Self.sensorConfigurationUUID, flags: [.read, .write, .notify],
                                        initialValue: Self.disabledSensors.encode()),
                SimulatedCharacteristic(Self.sensorDataUUID, flags: .notify),
                SimulatedCharacteristic(Self.gestureInformationUUID, flags: .read, initialValue: gestures.encode()),
                SimulatedCharacteristic(Self.gestureConfigurationUUID, flags: [.read, .write, .notify],
                                        initialValue: Self.disabledGestures.encode()),
                SimulatedCharacteristic(Self.gestureDataUUID, flags: .notify),
            ]),
            information.service,
        ]
    }

    static var disabledSensors: BoseSensorConfiguration { BoseSensorConfiguration(disabling: BoseSensor.allCases.map(\.rawValue)) }
    static var disabledGestures: BoseGestureConfiguration { BoseGestureConfiguration(disabling: gestures.map(\.rawValue)) }

    /// Whether a central is connected (the behaviour is running).
    var isConnected: Bool { connection != nil }

    // MARK: Connection

    public func run(on link: any PeripheralLink) async {
        let current = connect(link)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.streamSensorData(connection: current.id, on: link) }
            if !script.isEmpty {
                group.addTask { await self.performScript(connection: current, on: link) }
            }
        }
        disconnect(current.id)
    }

    private func connect(_ link: any PeripheralLink) -> Connection {
        connectionCount += 1
        sensorConfiguration = Self.disabledSensors
        gestureConfiguration = Self.disabledGestures
        let now = time.now
        let current = Connection(id: connectionCount, link: link, start: now,
                                 startDeviceMilliseconds: bootMilliseconds + Self.milliseconds(now - created),
                                 startMotionMilliseconds: motionMilliseconds)
        connection = current
        // The head makes the scripted movements whether or not the gestures are enabled.
        let origin = Double(motionMilliseconds) / 1000
        for entry in script {
            motion.perform(entry.gesture.motion, endingAt: origin + entry.seconds)
        }
        return current
    }

    /// The link went: the device forgets its configuration.
    private func disconnect(_ id: Int) {
        guard connection?.id == id else { return }
        connection = nil
        sensorConfiguration = Self.disabledSensors
        gestureConfiguration = Self.disabledGestures
    }

    /// Ticks at the enabled sensors' shared period (the transmission period while none is enabled), sending one
    /// record per enabled sensor each period.
    private func streamSensorData(connection id: Int, on link: any PeripheralLink) async {
        var interval = currentInterval
        var schedule = TickSchedule(interval: .milliseconds(interval), time: time)
        while await schedule.waitForNextTick() {
            guard connection?.id == id else { return }
            motionMilliseconds += Int64(interval)
            if interval == sharedPeriod {
                await sendSensorData(on: link, connection: id)
            }
            let next = currentInterval
            if next != interval {
                interval = next
                schedule = TickSchedule(interval: .milliseconds(next), time: time)
            }
        }
    }

    /// The period all enabled sensors share, nil when none is enabled.
    private var sharedPeriod: UInt16? {
        sensorConfiguration.entries.first { $0.periodMilliseconds != 0 }?.periodMilliseconds
    }

    private var currentInterval: UInt16 { sharedPeriod ?? Self.idleInterval }

    private func sendSensorData(on link: any PeripheralLink, connection id: Int) async {
        let sensors = sensorConfiguration.enabledSensors
        guard !sensors.isEmpty, let connection, connection.id == id else { return }
        let timestamp = motionTimestamp(connection)
        let reading = motion.sample(at: Double(motionMilliseconds) / 1000)
        let records = sensors.map { Self.record(of: $0, from: reading, timestamp: timestamp) }
        for value in Self.notifications(records, limit: max(1, link.mtu - 3)) {
            guard self.connection?.id == id else { return }
            await link.notify(Self.sensorDataUUID, value: value)
        }
    }

    /// Records packed into notifications of at most `limit` bytes, never splitting a record.
    static func notifications(_ records: [BoseSensorRecord], limit: Int) -> [[UInt8]] {
        var values: [[UInt8]] = []
        var current: [UInt8] = []
        for record in records {
            let bytes = BoseSensorData.encode([record], information: sensorInformation)
            if !current.isEmpty && current.count + bytes.count > limit {
                values.append(current)
                current = []
            }
            current += bytes
        }
        if !current.isEmpty { values.append(current) }
        return values
    }

    static func record(of sensor: BoseSensor, from reading: BoseHeadMotion.Reading, timestamp: UInt16) -> BoseSensorRecord {
        let entry = sensorInformation.entry(for: sensor)
        func raw(_ value: Double) -> Int16 { entry?.rawValue(for: value) ?? 0 }
        func vector(_ vector: BoseHeadMotion.Vector, accuracy: UInt8) -> BoseSensorRecord.Payload {
            .vector(x: raw(vector.x), y: raw(vector.y), z: raw(vector.z), accuracy: accuracy)
        }
        func quaternion(_ quaternion: BoseHeadMotion.Quaternion, accuracy: Double?) -> BoseSensorRecord.Payload {
            .quaternion(x: raw(quaternion.x), y: raw(quaternion.y), z: raw(quaternion.z), w: raw(quaternion.w),
                        accuracy: accuracy.map(raw))
        }
        let payload: BoseSensorRecord.Payload = switch sensor {
        case .accelerometer:
            vector(BoseHeadMotion.Vector(x: reading.acceleration.x / BoseHeadMotion.gravity, y: reading.acceleration.y / BoseHeadMotion.gravity,
                                         z: reading.acceleration.z / BoseHeadMotion.gravity), accuracy: 3)
        case .gyroscope: vector(reading.angularVelocity, accuracy: 3)
        case .rotation: quaternion(reading.rotation, accuracy: reading.rotationAccuracy)
        case .gameRotation: quaternion(reading.gameRotation, accuracy: nil)
        case .orientation: vector(reading.orientation, accuracy: 3)
        case .magnetometer: vector(reading.magneticField, accuracy: 3)
        case .uncalibratedMagnetometer:
            .uncalibratedVector(
                x: raw(reading.magneticField.x + reading.magnetometerBias.x),
                y: raw(reading.magneticField.y + reading.magnetometerBias.y),
                z: raw(reading.magneticField.z + reading.magnetometerBias.z),
                biasX: raw(reading.magnetometerBias.x), biasY: raw(reading.magnetometerBias.y),
                biasZ: raw(reading.magnetometerBias.z))
        }
        return BoseSensorRecord(sensor: sensor, timestamp: timestamp, payload: payload)
    }

    /// The device clock at the current motion time: records are spaced exactly by their period.
    private func motionTimestamp(_ connection: Connection) -> UInt16 {
        let milliseconds = connection.startDeviceMilliseconds + motionMilliseconds - connection.startMotionMilliseconds
        return UInt16(truncatingIfNeeded: milliseconds)
    }

    /// The device clock now, for gestures, which the device reports when it detects them.
    private func deviceTimestampNow(_ connection: Connection) -> UInt16 {
        UInt16(truncatingIfNeeded: connection.startDeviceMilliseconds + Self.milliseconds(time.now - connection.start))
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    // MARK: Gestures

    private func performScript(connection current: Connection, on link: any PeripheralLink) async {
        for entry in script {
            do {
                try await time.sleep(until: current.start + .milliseconds(Int64((entry.seconds * 1000).rounded())))
            } catch {
                return
            }
            await report(entry.gesture, connection: current.id, on: link)
        }
    }

    /// Sends `gesture` on GestureData when the central enabled it on this connection.
    private func report(_ gesture: BoseGesture, connection id: Int, on link: any PeripheralLink) async {
        guard let connection, connection.id == id, gestureConfiguration.isEnabled(gesture) else { return }
        let event = BoseGestureEvent(gesture: gesture, timestamp: deviceTimestampNow(connection))
        await link.notify(Self.gestureDataUUID, value: event.encode())
    }

    public func handle(_ event: DeviceEvent, link: (any PeripheralLink)?) async -> Bool {
        guard event == .buttonPress else { return false }
        // The knocks land just ahead of the motion's clock, where the next samples see them.
        motion.perform(.doubleTap, endingAt: Double(motionMilliseconds + 40) / 1000)
        if let link, let connection {
            await report(.doubleTap, connection: connection.id, on: link)
        }
        return true
    }

    // MARK: Reads and writes

    public func read(_ characteristic: BluetoothUUID) async throws(ATTError) -> [UInt8] {
        switch characteristic {
        case Self.deviceInformationUUID: return deviceInformation.encode()
        case Self.sensorInformationUUID: return Self.sensorInformation.encode()
        case Self.sensorConfigurationUUID: return sensorConfiguration.encode()
        case Self.gestureInformationUUID: return gestureInformation.encode()
        case Self.gestureConfigurationUUID: return gestureConfiguration.encode()
        default:
            guard let value = information.value(of: characteristic) else { throw .readNotPermitted }
            return value
        }
    }

    public func write(_ characteristic: BluetoothUUID, value: [UInt8], kind: WriteKind) async throws(ATTError) {
        switch characteristic {
        case Self.sensorConfigurationUUID:
            sensorConfiguration = try validatedSensorConfiguration(value)
        case Self.gestureConfigurationUUID:
            gestureConfiguration = try validatedGestureConfiguration(value)
        default:
            throw .writeNotPermitted
        }
        confirm(characteristic)
    }

    /// The full configuration `value` asks for, or the error the device answers.
    func validatedSensorConfiguration(_ value: [UInt8]) throws(ATTError) -> BoseSensorConfiguration {
        guard value.count % 3 == 0, let written = try? BoseSensorConfiguration.decode(value) else {
            throw Self.invalidConfiguration
        }
        var result = Self.disabledSensors
        var listed: Set<UInt8> = []
        for entry in written.entries {
            guard let offered = Self.sensorInformation.entry(for: entry.sensorID), let sensor = offered.sensor,
                  listed.insert(entry.sensorID).inserted else { throw Self.invalidConfiguration }
            if entry.periodMilliseconds != 0 {
                guard let period = BoseSamplePeriod(rawValue: entry.periodMilliseconds),
                      offered.availablePeriodsMask & period.maskBit != 0 else { throw Self.periodNotOffered }
            }
            result.setPeriod(entry.periodMilliseconds, for: sensor)
        }
        guard Set(result.entries.map(\.periodMilliseconds).filter { $0 != 0 }).count <= 1 else { throw Self.periodsDiffer }
        guard result.enabledSensors.count <= maxActiveSensors else { throw Self.tooManySensors }
        return result
    }

    func validatedGestureConfiguration(_ value: [UInt8]) throws(ATTError) -> BoseGestureConfiguration {
        guard value.count % 2 == 0, let written = try? BoseGestureConfiguration.decode(value, information: gestureInformation) else {
            throw Self.invalidConfiguration
        }
        var result = Self.disabledGestures
        var listed: Set<UInt8> = []
        for entry in written.entries {
            guard let gesture = BoseGesture(rawValue: entry.gestureID), Self.gestures.contains(gesture),
                  listed.insert(entry.gestureID).inserted else { throw Self.invalidConfiguration }
            // Stricter than a reader of the state needs to be: this device takes 0x00 and 0x01 only.
            guard entry.configuration.first ?? 0 <= 1 else { throw Self.invalidGestureState }
            result.set(gesture, enabled: entry.isEnabled)
        }
        return result
    }

    /// Notifies the configuration the device runs a moment after the write was answered; at send time, so that
    /// after several quick writes the last notification is what the device runs.
    private func confirm(_ characteristic: BluetoothUUID) {
        guard confirmsConfiguration, let connection else { return }
        let id = connection.id
        let link = connection.link
        Task {
            try? await time.sleep(for: Self.confirmationDelay)
            await self.sendConfiguration(characteristic, connection: id, on: link)
        }
    }

    private func sendConfiguration(_ characteristic: BluetoothUUID, connection id: Int, on link: any PeripheralLink) async {
        guard connection?.id == id else { return }
        let value = characteristic == Self.sensorConfigurationUUID ? sensorConfiguration.encode() : gestureConfiguration.encode()
        await link.notify(characteristic, value: value)
    }

    /// The Bose UUID constants are valid 128-bit UUIDs (a test compares them); the fallback is never used.
    private static func uuid(_ text: String) -> BluetoothUUID { BluetoothUUID(string: text) ?? BluetoothUUID(0x0000) }
}

extension BoseSensorInformation.Entry {
    /// The raw value the device sends for `value`, the inverse of `scale`: (value − minScaled) × (maxRaw − minRaw)
    /// / (maxScaled − minScaled) + minRaw, rounded and clamped to the raw range.
    func rawValue(for value: Double) -> Int16 {
        let scaledSpan = Double(maximumScaled) - Double(minimumScaled)
        guard scaledSpan != 0, value.isFinite else { return minimumRaw }
        let raw = (value - Double(minimumScaled)) * (Double(maximumRaw) - Double(minimumRaw)) / scaledSpan + Double(minimumRaw)
        let low = Double(Swift.min(minimumRaw, maximumRaw))
        let high = Double(Swift.max(minimumRaw, maximumRaw))
        return Int16(Swift.min(Swift.max(raw.rounded(), low), high))
    }
}

extension BoseGesture {
    /// The head movement the gesture is.
    var motion: BoseHeadMotion.Gesture {
        switch self {
        case .singleTap, .doubleTap: .doubleTap
        case .headNod: .nod
        case .headShake: .shake
        }
    }
}

/// The option `gestures`: comma-separated `name@seconds` (seconds after each connection), e.g.
/// `"double_tap@5,head_nod@12.5"`.
enum BoseGestureScript {
    struct Entry: Sendable, Equatable {
        var gesture: BoseGesture
        var seconds: Double
    }

    static func parse(_ text: String, key: String, available: [BoseGesture]) throws(SimulatedDeviceConfigurationError) -> [Entry] {
        var entries: [Entry] = []
        for item in text.split(separator: ",") {
            let parts = item.split(separator: "@", omittingEmptySubsequences: false).map { String($0.filter { !$0.isWhitespace }) }
            guard parts.count == 2, let seconds = Double(parts[1]), seconds.isFinite, (0...86_400).contains(seconds) else {
                throw .invalidOption(key: key, reason: "expected name@seconds (0…86400), got \"\(item)\"")
            }
            guard let gesture = BoseGesture(name: parts[0]), available.contains(gesture) else {
                throw .invalidOption(key: key, reason: "gesture must be one of \(available.map(\.name).joined(separator: ", ")), got \"\(parts[0])\"")
            }
            entries.append(Entry(gesture: gesture, seconds: seconds))
        }
        // Stable: two gestures at the same moment keep the script's order.
        return entries.enumerated().sorted { ($0.element.seconds, $0.offset) < ($1.element.seconds, $1.offset) }.map(\.element)
    }
}

extension SimulatedDeviceKind {
    public static let boseFrames = SimulatedDeviceKind(
        name: "bose_frames", summary: "Bose Frames: Bose Wearable sensor service 0xFDD2 (7 sensors, gestures), Device Information"
    ) { configuration throws(SimulatedDeviceConfigurationError) in try SimulatedBoseFrames(configuration) }
}
