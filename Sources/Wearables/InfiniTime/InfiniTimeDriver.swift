import BlueZ
import Logging
import Synchronization

/// The driver for a PineTime running InfiniTime, on the firmware's documented BLE API (docs/protocols/infinitime.md).
///
/// On every connection it reads Device Information (the Firmware Revision decides what the watch can take: weather
/// with or without sun times), sets the clock (Current Time in local time, then the zone through Local Time
/// Information where the watch has it), reads battery and steps, and follows heart rate, battery, steps, raw motion
/// and the watch's buttons: the music app's (`music` events) and the incoming-call screen's (`call` events).
/// Requests push to the watch: notifications, now playing, weather, navigation, find. Firmware updates go through
/// the gateway's Legacy DFU, which InfiniTime's application serves itself.
///
/// It does not read the step history, sleep or settings (not in the BLE API), nor use the resource file
/// transfer (BLE FS).
public final class InfiniTimeDriver: WearableDriver {

    /// InfiniTime's own services, which no other device has.
    static let customServices = [
        InfiniTimeUUID.Service.motion, InfiniTimeUUID.Service.music, InfiniTimeUUID.Service.navigation,
        InfiniTimeUUID.Service.simpleWeather, InfiniTimeUUID.Service.legacyWeather,
    ]
    static let advertisedName = "InfiniTime"

    /// One of InfiniTime's own services (BlueZ lists them once resolved) makes it certain. Before connecting the
    /// watch advertises only Heart Rate and the Legacy DFU service: with its name that is likely (the name alone
    /// proves nothing, any device can take it).
    public static func match(_ device: Advertisement) -> DriverMatch? {
        match(name: device.name ?? device.alias, serviceUUIDs: device.serviceUUIDs)
    }

    static func match(name: String?, serviceUUIDs: [String]) -> DriverMatch? {
        let uuids = Set(serviceUUIDs.map { $0.lowercased() })
        if customServices.contains(where: uuids.contains) { return .certain }
        if name == advertisedName, uuids.contains(InfiniTimeUUID.Standard.legacyDFUService) { return .likely }
        return nil
    }

    /// What this connection learned of the watch.
    struct Watch: Sendable {
        var firmware: InfiniTimeFirmwareVersion?
    }

    private let watch = Mutex(Watch())

    public init(configuration: DriverConfiguration) {}

    var firmware: InfiniTimeFirmwareVersion? { watch.withLock { $0.firmware } }

    // MARK: Session

    public func session(_ link: DeviceLink) async throws {
        watch.withLock { $0 = Watch() }
        await readInformation(link)
        do { _ = try await setTime(link) } catch {
            link.logger.warning("setting the watch's clock failed", metadata: ["error": "\(error)"])
        }
        if let steps = link.characteristic(InfiniTimeUUID.Characteristic.stepCount),
           let bytes = try? await link.read(steps) {
            stepCount(bytes, link)
        }
        let streams: [(String, @Sendable ([UInt8], DeviceLink) -> Void)] = [
            (GATTUUID.string(for: GATTUUID.Characteristic.heartRateMeasurement), heartRate),
            (InfiniTimeUUID.Characteristic.stepCount, stepCount),
            (InfiniTimeUUID.Characteristic.motionValues, motion),
            (InfiniTimeUUID.Characteristic.musicEvent, musicEvent),
            (InfiniTimeUUID.Characteristic.notificationEvent, callEvent),
        ]
        var handlers = streams.compactMap { uuid, handle -> NotificationHandler? in
            guard let characteristic = link.characteristic(uuid), characteristic.canNotify else { return nil }
            return NotificationHandler(characteristic) { handle($0, link) }
        }
        if let battery = link.batteryNotifications() { handlers.append(battery) }
        try await link.runSession(handlers)
    }

    /// Device Information and battery for the retained state; the Firmware Revision also for this connection.
    func readInformation(_ link: DeviceLink) async {
        var state = await link.readDeviceInformationStrings()
        let version = state["firmware"]?.text.flatMap(InfiniTimeFirmwareVersion.init(revision:))
        watch.withLock { $0.firmware = version }
        if let percent = await link.readBatteryPercent() { state["battery"] = .integer(Int64(percent)) }
        if !state.isEmpty { link.emit(.state(state)) }
    }

    // MARK: Notifications → events

    private func decodeFailed(_ what: String, _ bytes: [UInt8], _ error: GATTCodecError, _ link: DeviceLink) {
        link.logger.debug("malformed \(what) notification dropped", metadata: ["bytes": "\(bytes)", "error": "\(error)"])
    }

    /// InfiniTime sends flags 0 and one byte: no contact flag, no RR intervals.
    @Sendable private func heartRate(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let measurement = try HeartRateMeasurement.decode(bytes)
            link.emit(.sample(SensorSample(sensor: .heartRate, timestamp: link.now, reading: .heartRate(
                bpm: measurement.bpm, contact: measurement.contact, energyExpendedKJ: measurement.energyExpendedKJ,
                rrIntervalsMilliseconds: measurement.rrIntervalsMilliseconds))))
        } catch { decodeFailed("heart rate", bytes, error, link) }
    }

    @Sendable private func stepCount(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let steps = try InfiniTimeStepCount.decode(bytes)
            link.emit(.sample(SensorSample(sensor: .steps, timestamp: link.now, reading: .steps(count: Int(steps.steps)))))
        } catch { decodeFailed("step count", bytes, error, link) }
    }

    /// Raw accelerometer counts (1024 per g) in m/s², stamped on arrival: the watch sends no time.
    @Sendable private func motion(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let acceleration = try InfiniTimeMotionValues.decode(bytes).metresPerSecondSquared
            link.emit(.sample(SensorSample(sensor: .accelerometer, timestamp: link.now, reading: .vector(
                x: acceleration.x, y: acceleration.y, z: acceleration.z, accuracy: nil))))
        } catch { decodeFailed("motion", bytes, error, link) }
    }

    @Sendable private func musicEvent(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let event = try InfiniTimeMusicEvent.decode(bytes)
            link.emit(.event(name: "music", timestamp: link.now, details: ["action": .text(event.contractName)]))
        } catch { decodeFailed("music event", bytes, error, link) }
    }

    @Sendable private func callEvent(_ bytes: [UInt8], _ link: DeviceLink) {
        do {
            let response = try InfiniTimeCallResponse.decode(bytes)
            link.emit(.event(name: "call", timestamp: link.now, details: ["action": .text(response.contractName)]))
        } catch { decodeFailed("call response", bytes, error, link) }
    }
}

extension InfiniTimeMusicEvent {
    /// The `action` of a `music` event; `open` is the watch's music app coming to the screen (a player may answer
    /// with `request/music`).
    public var contractName: String {
        switch self {
        case .play: "play"
        case .pause: "pause"
        case .next: "next"
        case .previous: "previous"
        case .volumeUp: "volume_up"
        case .volumeDown: "volume_down"
        case .appOpened: "open"
        }
    }
}

extension InfiniTimeCallResponse {
    /// The `action` of a `call` event.
    public var contractName: String {
        switch self {
        case .answer: "answer"
        case .reject: "reject"
        case .mute: "mute"
        }
    }
}
