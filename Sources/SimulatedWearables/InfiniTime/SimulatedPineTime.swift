import EventLoop
import Foundation
import Wearables

/// A PineTime running InfiniTime, built from the firmware's public documents and sources (docs/protocols/infinitime.md):
/// the GATT table of the release its `firmware` option names, a walking wearer's steps and raw motion, a resting
/// heart rate, and the watch's buttons.
///
/// | service | what it does here |
/// | --- | --- |
/// | Current Time 0x1805 | Current Time (read, write; 10 bytes or ATT 0x0D); Local Time Information (read, write) from 1.12 |
/// | Alert Notification 0x1811 | New Alert (write): recorded as shown (`InfiniTimeNewAlert`); notification event (notify): the call buttons |
/// | Immediate Alert 0x1802 | Alert Level (write without response): the "find" alert, counted |
/// | Heart Rate 0x180D | measurement (notify) at 1 Hz, flags 0 and a u8 rate, as InfiniTime sends |
/// | Battery 0x180F, Device Information 0x180A | level (read, notify); the Firmware Revision the `firmware` option names |
/// | music `00000000-78fc-…` | event (notify): the music buttons; status, texts, numbers, flags (read, write) |
/// | navigation `00010000-…` | icon, narrative, distance, progress (read, write) |
/// | motion `00030000-…` (1.7+) | step count and raw motion (read, notify), motion at `motion_hz` |
/// | Simple Weather `00050000-…` (1.14+) | weather data (write): version 1 read only from 1.16, as the firmware |
/// | Legacy DFU 0x1530 | served by the application (`PineTimeApplicationDFU`) |
///
/// What the watch received is kept for `inspect()`; the music and call buttons are `DeviceEvent`s (`music_play` …,
/// `call_answer` …). A call button does something only while a call is on the screen (a New Alert of category
/// `call` not yet answered), as on the watch. Options: `SimulatedPineTimeOptions`.
public actor SimulatedPineTime: SimulatedPeripheral {
    public nonisolated let advertisement: SimulatedAdvertisement
    public nonisolated let services: [SimulatedService]
    public nonisolated let deviceName: String

    typealias UUID = InfiniTimeUUID.Characteristic
    static let heartRateUUID = BluetoothUUID(GATTUUID.Characteristic.heartRateMeasurement)
    static let localTimeUUID = BluetoothUUID(GATTUUID.Characteristic.localTimeInformation)
    static let newAlertUUID = BluetoothUUID(0x2A46)
    static let alertLevelUUID = BluetoothUUID(GATTUUID.Characteristic.alertLevel)
    static func custom(_ uuid: String) -> BluetoothUUID { BluetoothUUID(constant: uuid) }

    private let options: SimulatedPineTimeOptions
    private let information: SimulatedDeviceInformation
    private var battery: SimulatedBattery
    private var heart: HeartRateSignal
    private var walk: PineTimeWalk
    private let time: TimeSource
    private var clock: SimulatedCurrentTime
    private var localTime: LocalTimeInformation?
    private var dfu: PineTimeApplicationDFU
    private var outbox: AsyncStream<SimulatedDFUOutgoing>.Continuation?

    /// What the watch was sent, as `inspect()` shows it.
    private var shown: [String: String] = [:]
    /// The music and navigation values as written, for reads.
    private var written: [BluetoothUUID: [UInt8]] = [:]
    private var notificationCount = 0
    /// New Alerts whose category byte the SIG does not list, shown all the same.
    private var unknownCategoryCount = 0
    private var callShowing = false
    private var alerts = 0
    private var weatherIgnored = 0
    private var timeWrites = 0

    public init(_ configuration: SimulatedDeviceConfiguration) throws(SimulatedDeviceConfigurationError) {
        var reader = SimulationOptionReader(configuration.options)
        time = configuration.time
        clock = SimulatedCurrentTime(timeZone: TimeZone(identifier: "UTC") ?? .current, time: configuration.time)
        options = try SimulatedPineTimeOptions(reading: &reader)
        battery = try SimulatedBattery(reading: &reader, defaultLevel: 80)
        try reader.rejectUnknownKeys()
        information = SimulatedDeviceInformation(manufacturer: "PINE64", model: "PineTime", serial: String(format8: configuration.seed),
                                                 hardware: "1.0a", firmware: options.firmware, software: "InfiniTime")
        var random = SimulationRandom(seed: configuration.seed)
        heart = HeartRateSignal(settings: .init(restingBPM: options.heartRate, contact: nil, reportsRRIntervals: false,
                                                reportsEnergyExpended: false), seed: random.next())
        walk = PineTimeWalk(cadence: options.cadence, steps: options.steps, seed: random.next())
        dfu = PineTimeApplicationDFU(firmware: options.firmware)
        let name = configuration.name ?? "InfiniTime"
        deviceName = name
        advertisement = SimulatedAdvertisement(
            localName: name, serviceUUIDs: [BluetoothUUID(GATTUUID.Service.heartRate), PineTimeApplicationDFU.service],
            appearance: 0x00C2, // Watch: Smartwatch
            rssi: -62)
        services = Self.table(options, information: information, battery: battery)
    }

    // MARK: Connection

    public func run(on link: any PeripheralLink) async {
        let (stream, continuation) = AsyncStream.makeStream(of: SimulatedDFUOutgoing.self)
        outbox?.finish()
        outbox = continuation
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await SimulatedDFUOutgoing.deliver(stream, on: link) }
            group.addTask { await self.heartAndBattery(on: link) }
            if options.hasMotion { group.addTask { await self.motion(on: link) } }
            await group.next()
            group.cancelAll()
        }
        continuation.finish()
        dfu.linkDropped()
    }

    private func heartAndBattery(on link: any PeripheralLink) async {
        var schedule = TickSchedule(interval: .seconds(1), time: time)
        while await schedule.waitForNextTick() {
            if let measurement = try? heart.next(after: 1) { await link.notify(Self.heartRateUUID, value: measurement.encode()) }
            if battery.drain(for: 1) { await link.notify(SimulatedBattery.levelUUID, value: battery.encoded) }
        }
    }

    private func motion(on link: any PeripheralLink) async {
        let seconds = 1 / options.motionHertz
        var schedule = TickSchedule(interval: .nanoseconds(Int64(seconds * 1e9)), time: time)
        while await schedule.waitForNextTick() {
            if walk.advance(by: seconds) {
                await link.notify(Self.custom(UUID.stepCount), value: InfiniTimeStepCount(steps: walk.steps).encode())
            }
            await link.notify(Self.custom(UUID.motionValues), value: walk.motion().encode())
        }
    }

    // MARK: Reads

    public func read(_ characteristic: BluetoothUUID) async throws(ATTError) -> [UInt8] {
        switch characteristic {
        case SimulatedCurrentTime.uuid: return try clock.read()
        case Self.localTimeUUID:
            return localTime?.encode() ?? [0, 0]
        case SimulatedBattery.levelUUID: return battery.encoded
        case BluetoothUUID(GATTUUID.Characteristic.firmwareRevision): return DeviceInformationString.encode(dfu.firmware)
        case Self.heartRateUUID: return [0, UInt8(clamping: heart.currentBPM)]
        case Self.custom(UUID.stepCount): return InfiniTimeStepCount(steps: walk.steps).encode()
        case Self.custom(UUID.motionValues): return walk.motion().encode()
        case PineTimeApplicationDFU.version: return PineTimeApplicationDFU.configuration.version.encoded()
        default:
            if let value = information.value(of: characteristic) { return value }
            if let bytes = written[characteristic] { return bytes }
            if Self.storedKeys[characteristic] != nil { return [] }
            throw .readNotPermitted
        }
    }

    // MARK: Writes

    public func write(_ characteristic: BluetoothUUID, value: [UInt8], kind: WriteKind) async throws(ATTError) {
        if let part = Self.part(of: characteristic), part == options.failing { throw .unlikelyError }
        switch characteristic {
        case SimulatedCurrentTime.uuid:
            try clock.write(value)
            timeWrites += 1
        case Self.localTimeUUID:
            guard value.count == 2 else { throw .invalidAttributeValueLength }
            localTime = try? LocalTimeInformation.decode(value)
        case Self.newAlertUUID:
            newAlert(value)
        case Self.alertLevelUUID:
            if let level = try? AlertLevel.decode(value), level != .none { alerts += 1 }
        case Self.custom(UUID.weatherData):
            weather(value)
        case PineTimeApplicationDFU.controlPoint, PineTimeApplicationDFU.packet:
            for item in dfu.write(characteristic, value) { outbox?.yield(item) }
        default:
            guard let key = Self.storedKeys[characteristic] else { throw .writeNotPermitted }
            written[characteristic] = value
            shown[key] = Self.describe(characteristic, value)
        }
    }

    /// As `AlertNotificationService::OnAlert`: 3 bytes or fewer are ignored; a call opens the call screen; every
    /// other category byte — the SIG's, or one it does not list, such as Gadgetbridge's 0xFA — is shown as a simple
    /// alert (kept as `0xFA` in `notification_category`, and counted in `notifications_unknown_category`).
    private func newAlert(_ value: [UInt8]) {
        let known = value.first.flatMap(InfiniTimeAlertCategory.init(rawValue:))
        var asShown = value
        if !value.isEmpty, known == nil { asShown[0] = InfiniTimeAlertCategory.simpleAlert.rawValue }
        guard let alert = try? InfiniTimeNewAlert.decode(asShown) else { return }
        notificationCount += 1
        if known == nil { unknownCategoryCount += 1 }
        shown["notification_category"] = known == nil ? String(format: "0x%02X", value[0]) : alert.category.contractName
        shown["notification_title"] = alert.title ?? "Notification"
        shown["notification_body"] = alert.body
        callShowing = alert.category == .call
    }

    /// As `SimpleWeatherService::OnCommand`: what it cannot read, or a version its release does not know, is
    /// ignored without an error.
    private func weather(_ value: [UInt8]) {
        guard let message = try? InfiniTimeWeatherMessage.decode(value) else {
            weatherIgnored += 1
            return
        }
        switch message {
        case .current(let weather):
            guard weather.version == 0 || options.readsWeatherVersion1 else {
                weatherIgnored += 1
                return
            }
            shown["weather_location"] = weather.location
            shown["weather_temperature"] = String(weather.temperature.celsius)
            shown["weather_icon"] = weather.icon.contractName
            shown["weather_sunrise"] = weather.sunTimes.map { String($0.sunrise) } ?? "unknown"
        case .forecast(let forecast):
            shown["forecast_days"] = String(forecast.days.count)
            shown["forecast_first_max"] = forecast.days.first.map { String($0.maximumTemperature.celsius) } ?? ""
        }
    }

    // MARK: Buttons

    public func handle(_ event: DeviceEvent, link: (any PeripheralLink)?) async -> Bool {
        if let music = Self.musicButtons[event] {
            await link?.notify(Self.custom(UUID.musicEvent), value: music.encode())
            return true
        }
        if let response = Self.callButtons[event] {
            guard callShowing else { return true }
            callShowing = false
            shown["call_response"] = response.contractName
            await link?.notify(Self.custom(UUID.notificationEvent), value: response.encode())
            return true
        }
        return false
    }

    static let musicButtons: [DeviceEvent: InfiniTimeMusicEvent] = [
        .musicPlay: .play, .musicPause: .pause, .musicNext: .next, .musicPrevious: .previous,
        .musicVolumeUp: .volumeUp, .musicVolumeDown: .volumeDown,
    ]
    static let callButtons: [DeviceEvent: InfiniTimeCallResponse] = [.callAnswer: .answer, .callReject: .reject, .callMute: .mute]

    // MARK: Inspection

    /// `firmware`, `time_writes`, `time_zone_quarters` / `dst` (Local Time Information as written), `notifications`
    /// (`notifications_unknown_category` of them with a category byte the SIG does not list) and `notification_title` / `_body` / `_category`, `call_showing`, `call_response`, `alerts` (find alerts),
    /// `music_*` and `navigation_*` as the watch reads them, `weather_*`, `forecast_*`, `weather_ignored`, `steps`,
    /// `dfu_updates`, `dfu_bytes_received`.
    public func inspect() async -> [String: String] {
        var values = shown
        values["firmware"] = dfu.firmware
        values["time_writes"] = String(timeWrites)
        if let localTime {
            values["time_zone_quarters"] = String(localTime.timeZone)
            values["dst"] = String(localTime.dstOffset.rawValue)
        }
        values["notifications"] = String(notificationCount)
        values["notifications_unknown_category"] = String(unknownCategoryCount)
        values["call_showing"] = String(callShowing)
        values["alerts"] = String(alerts)
        values["weather_ignored"] = String(weatherIgnored)
        values["steps"] = String(walk.steps)
        values["dfu_updates"] = String(dfu.updates)
        values["dfu_bytes_received"] = String(dfu.bytesReceived)
        return values
    }
}

extension SimulatedDeviceKind {
    public static let pineTimeInfiniTime = SimulatedDeviceKind(
        name: "pinetime_infinitime",
        summary: "PineTime watch with InfiniTime: time, notifications, music, navigation, weather, steps, motion, heart rate, Legacy DFU in the application"
    ) { configuration throws(SimulatedDeviceConfigurationError) in try SimulatedPineTime(configuration) }
}

extension SimulatedDeviceInformation {
    /// Fixed strings, for a device whose Device Information is not a scenario option.
    init(manufacturer: String, model: String, serial: String, hardware: String, firmware: String, software: String) {
        self.manufacturer = manufacturer
        self.model = model
        self.serial = serial
        self.hardware = hardware
        self.firmware = firmware
        self.software = software
    }
}
