import EventLoop
import Logging
import Wearables

/// An Empatica E4 wristband as a central sees it: the reverse-engineered sensors (0x3EA0), status (0x3EB0) and
/// command (0x3E70) services of `E4UUID`, plus Device Information. Bytes come from the `Empatica` codecs the
/// driver decodes with; the signals come from `E4SignalSource`, which this actor only schedules.
///
/// Advertising (`SimulatedAdvertisement`): the local name is exactly **"Empatica E4"** — both reverse-engineered
/// clients find the band by that exact name (`main.py`: `BleakScanner.find_device_by_name("Empatica E4")`;
/// Gadgetbridge's coordinator: `Pattern.compile("Empatica E4")`, which Gadgetbridge matches against the whole
/// name), so a serial suffix would hide it from them; the serial is in Device Information instead, and bands are
/// told apart by address. The advertised service is the sensors service 0x3EA0: *modeled* — no source says what
/// the E4 advertises (both clients match the name) — and it lets a driver match by service.
///
/// GATT (flags *modeled* from how the clients use them):
///
/// | service | characteristic | flags |
/// | --- | --- | --- |
/// | sensors 0x3EA0 | BVP 0x3EA1, accelerometer 0x3EA3, skin temperature 0x3EA6, EDA 0x3EA8 | notify |
/// | status 0x3EB0 | control 0x3EB2 | notify (Gadgetbridge subscribes; nothing is ever sent, its layout is unknown) |
/// | | battery 0x3EB3 | read, notify (`E4BatteryLevel`) |
/// | | tag 0x3EB4 — **modeled**, see `E4TagPress` | notify |
/// | command 0x3E70 | command 0x3E71 | write, write without response (`E4StartCommand`) |
/// | Device Information 0x180A | manufacturer "Empatica", model "E4", serial "A0" + 4 hex digits, … | read |
///
/// Behaviour:
/// - Nothing streams until the start command `[0x01, Unix seconds u32 LE]` is written to 0x3E71 on this
///   connection. A value of another length is refused with ATT **0x0D** (Invalid Attribute Value Length); five
///   bytes with another opcode with ATT **0x80** (`commandNotSupported`, an application error: *modeled*, the E4's
///   answer is unknown). A refused command changes nothing. A second start command while streaming is accepted
///   and ignored: the streams, their clocks and the EDA counter carry on.
/// - After the start command each stream sends a packet every `samplesPerPacket / rate` (BVP 171.875 ms,
///   accelerometer 187.5 ms, EDA 1.5 s, temperature 1 s) on its own `TickSchedule`, the first one interval after
///   the command. A stream's packet goes to the central only if it has enabled notifications on that
///   characteristic; otherwise it is dropped, as a real peripheral drops it (the EDA counter shows the gap).
/// - The start command's time is the device's clock: sample *n* of a stream is at that time + *n* / rate, which is
///   where the signals are evaluated (the true heart rate included), and the tag's time is that time + the time
///   since the command.
/// - The battery is notified once when streaming starts and whenever its whole percentage drops; it drains while
///   connected (`battery`, 80 %; `battery_drain_per_hour`, 1).
/// - When the link drops, streaming stops; a new connection streams only after a new start command, with new
///   clocks, a new pulse generator and the EDA counter back at 0 (*modeled*).
/// - `button_press` is the E4's tag button: while streaming it notifies 0x3EB4 (`E4TagPress`, modeled); before the
///   start command or without a connection nothing is sent, but the press is the band's (handled, true).
///
/// The true heart rate: `E4HeartRateWave` from the options, a deterministic function of Unix time
/// (`trueHeartRate(atUnixSeconds:options:)`), and logged at info level every 10 s of streamed BVP as
/// `empatica_e4 <serial> true heart rate 72.4 bpm` with the sample's time as metadata `unix_time`. The serial
/// (option `serial`) stands in for the address, which a simulated device is not told.
///
/// Options: those of `E4SimulationSettings` (`bpm`, `bpm_variation`, `bpm_period_s`, `ppg_noise`, `motion`,
/// `eda_us`, `skin_temperature_c`), `battery`, `battery_drain_per_hour`, and the Device Information strings
/// (`manufacturer`, `model`, `serial`, `hardware`, `firmware`, `software`).
public actor SimulatedEmpaticaE4: SimulatedPeripheral {
    public nonisolated let advertisement: SimulatedAdvertisement
    public nonisolated let services: [SimulatedService]
    public nonisolated let deviceName: String

    /// Five bytes whose first is not the start opcode 0x01 (modeled: the E4's real answer is unknown).
    public static let commandNotSupported = ATTError.application(0x80)

    static let bvpUUID = BluetoothUUID(E4UUID.Short.bvp)
    static let accelerometerUUID = BluetoothUUID(E4UUID.Short.accelerometer)
    static let temperatureUUID = BluetoothUUID(E4UUID.Short.temperature)
    static let edaUUID = BluetoothUUID(E4UUID.Short.eda)
    static let controlUUID = BluetoothUUID(E4UUID.Short.control)
    static let batteryUUID = BluetoothUUID(E4UUID.Short.battery)
    static let tagUUID = BluetoothUUID(E4TagPress.characteristicUUID)
    static let commandUUID = BluetoothUUID(E4UUID.Short.command)

    let settings: E4SimulationSettings
    private let time: TimeSource
    let serial: String
    private let information: SimulatedDeviceInformation
    private var battery: SimulatedBattery
    private let logger: Logger
    /// Seconds of streamed BVP between two log lines of the true heart rate.
    private let truthLogSeconds: Double
    /// One seed per start command, in order, so that every session's signals follow from the device's seed.
    private var sessionSeeds: SimulationRandom
    private var connection: Connection?
    private var connectionCount = 0

    private struct Connection {
        let id: Int
        /// Yields once the start command is accepted; finished when the link goes.
        let started: AsyncStream<Void>.Continuation
        var session: Session?
    }

    /// What one start command set going.
    private struct Session {
        var source: E4SignalSource
        let startedAt: ContinuousClock.Instant
        /// The BVP time (Unix seconds) at which the true heart rate is logged next.
        var nextTruthLog: Double
    }

    public init(_ configuration: SimulatedDeviceConfiguration) throws(SimulatedDeviceConfigurationError) {
        try self.init(configuration, logger: Logger(label: "wear2mqtt-sim"))
    }

    /// `logger` receives the true heart rate every `truthLogSeconds` of streamed BVP.
    init(_ configuration: SimulatedDeviceConfiguration, logger: Logger, truthLogSeconds: Double = 10)
        throws(SimulatedDeviceConfigurationError)
    {
        var options = SimulationOptionReader(configuration.options)
        time = configuration.time
        settings = try E4SimulationSettings(reading: &options)
        battery = try SimulatedBattery(reading: &options, defaultLevel: 80)
        var information = try SimulatedDeviceInformation(reading: &options, defaultModel: "E4", seed: configuration.seed)
        information.manufacturer = try options.string("manufacturer", default: "Empatica")
        information.serial = try options.string("serial", default: "A0" + String(format8: configuration.seed).suffix(4))
        self.information = information
        try options.rejectUnknownKeys()

        serial = information.serial
        self.logger = logger
        self.truthLogSeconds = max(1.0 / 64, truthLogSeconds)
        sessionSeeds = SimulationRandom(seed: configuration.seed)
        let name = configuration.name ?? "Empatica E4"
        deviceName = name
        advertisement = SimulatedAdvertisement(localName: name, serviceUUIDs: [BluetoothUUID(E4UUID.Short.sensorsService)],
                                               rssi: -65)
        let batteryValue = Self.encode(battery)
        services = [
            SimulatedService(BluetoothUUID(E4UUID.Short.sensorsService), characteristics: [
                SimulatedCharacteristic(Self.bvpUUID, flags: .notify),
                SimulatedCharacteristic(Self.accelerometerUUID, flags: .notify),
                SimulatedCharacteristic(Self.temperatureUUID, flags: .notify),
                SimulatedCharacteristic(Self.edaUUID, flags: .notify),
            ]),
            SimulatedService(BluetoothUUID(E4UUID.Short.statusService), characteristics: [
                SimulatedCharacteristic(Self.controlUUID, flags: .notify),
                SimulatedCharacteristic(Self.batteryUUID, flags: [.read, .notify], initialValue: batteryValue),
                SimulatedCharacteristic(Self.tagUUID, flags: .notify),
            ]),
            SimulatedService(BluetoothUUID(E4UUID.Short.commandService), characteristics: [
                SimulatedCharacteristic(Self.commandUUID, flags: [.write, .writeWithoutResponse]),
            ]),
            information.service,
        ]
    }

    /// The heart rate a band with `options` gives its wearer at `unixSeconds`: what a beat detector on its BVP
    /// should find (see `E4HeartRateWave`). Throws as `init` does for invalid options; other options are ignored.
    public static func trueHeartRate(atUnixSeconds unixSeconds: Double, options: [String: SimulationOptionValue])
        throws(SimulatedDeviceConfigurationError) -> Double
    {
        var reader = SimulationOptionReader(options)
        return try E4SimulationSettings(reading: &reader).heartRate.bpm(atUnixSeconds: unixSeconds)
    }

    /// Whether a central is connected (the behaviour is running).
    var isConnected: Bool { connection != nil }
    /// Whether a start command was accepted on the current connection.
    var isStreaming: Bool { connection?.session != nil }

    private func isStreaming(connection id: Int) -> Bool {
        guard let connection, connection.id == id else { return false }
        return connection.session != nil && !Task.isCancelled
    }

    // MARK: Connection

    public func run(on link: any PeripheralLink) async {
        let (started, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = connect(started: continuation)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.drainBattery(connection: id, on: link) }
            group.addTask {
                for await _ in started { break }
                guard await self.isStreaming(connection: id) else { return }
                await self.streamAll(connection: id, on: link)
            }
        }
        disconnect(id)
    }

    private func connect(started: AsyncStream<Void>.Continuation) -> Int {
        connectionCount += 1
        connection?.started.finish()
        connection = Connection(id: connectionCount, started: started)
        return connectionCount
    }

    /// The link went: streaming stops, and the next connection needs a new start command.
    private func disconnect(_ id: Int) {
        guard let current = connection, current.id == id else { return }
        current.started.finish()
        connection = nil
    }

    /// Runs the four streams, each on its own schedule from the start command on.
    private func streamAll(connection id: Int, on link: any PeripheralLink) async {
        await link.notify(Self.batteryUUID, value: Self.encode(battery))
        await withTaskGroup(of: Void.self) { group in
            for stream in E4Stream.allCases {
                group.addTask { await self.stream(stream, connection: id, on: link) }
            }
        }
    }

    private func stream(_ stream: E4Stream, connection id: Int, on link: any PeripheralLink) async {
        var schedule = TickSchedule(interval: stream.packetInterval, time: time)
        while await schedule.waitForNextTick() {
            guard let value = nextPacket(stream, connection: id) else { return }
            await link.notify(BluetoothUUID(stream.characteristicUUID), value: value)
        }
    }

    /// The next packet of `stream` in the current session, nil once the connection has gone.
    private func nextPacket(_ stream: E4Stream, connection id: Int) -> [UInt8]? {
        guard let current = connection, current.id == id, current.session != nil else { return nil }
        guard let value = connection?.session?.source.nextPacket(stream) else { return nil }
        if stream == .bvp { logTrueHeartRateIfDue() }
        return value
    }

    private func logTrueHeartRateIfDue() {
        guard let session = connection?.session else { return }
        let source = session.source
        let time = source.unixSeconds(ofSample: source.bvpSamples - 1, in: .bvp)
        guard time >= session.nextTruthLog else { return }
        var next = session.nextTruthLog
        while next <= time { next += truthLogSeconds }
        connection?.session?.nextTruthLog = next
        let bpm = (source.currentHeartRate * 10).rounded() / 10
        logger.info("empatica_e4 \(serial) true heart rate \(bpm) bpm", metadata: ["unix_time": "\(time)"])
    }

    private func drainBattery(connection id: Int, on link: any PeripheralLink) async {
        var schedule = TickSchedule(interval: .seconds(1), time: time)
        while await schedule.waitForNextTick() {
            guard connection?.id == id else { return }
            if battery.drain(for: 1) {
                await link.notify(Self.batteryUUID, value: Self.encode(battery))
            }
        }
    }

    // MARK: Reads, writes and the button

    public func read(_ characteristic: BluetoothUUID) async throws(ATTError) -> [UInt8] {
        if characteristic == Self.batteryUUID { return Self.encode(battery) }
        guard let value = information.value(of: characteristic) else { throw .readNotPermitted }
        return value
    }

    public func write(_ characteristic: BluetoothUUID, value: [UInt8], kind: WriteKind) async throws(ATTError) {
        guard characteristic == Self.commandUUID else { throw .writeNotPermitted }
        let command = try Self.startCommand(from: value)
        guard let current = connection, current.session == nil else { return }
        let source = E4SignalSource(settings: settings, startUnixSeconds: command.unixSeconds, seed: sessionSeeds.next())
        connection?.session = Session(source: source, startedAt: time.now,
                                      nextTruthLog: Double(command.unixSeconds) + truthLogSeconds)
        current.started.yield()
    }

    /// The start command in `value`, or the ATT error the band answers.
    static func startCommand(from value: [UInt8]) throws(ATTError) -> E4StartCommand {
        guard value.count == E4StartCommand.byteCount else { throw .invalidAttributeValueLength }
        guard let command = try? E4StartCommand.decode(value) else { throw commandNotSupported }
        return command
    }

    public func handle(_ event: DeviceEvent, link: (any PeripheralLink)?) async -> Bool {
        guard event == .buttonPress else { return false }
        guard let link, let current = connection, let session = current.session else { return true }
        let elapsed = time.now - session.startedAt
        let milliseconds = Int64(session.source.startUnixSeconds) * 1000 + elapsed.components.seconds * 1000
            + elapsed.components.attoseconds / 1_000_000_000_000_000
        if let press = try? E4TagPress(unixMilliseconds: milliseconds) {
            await link.notify(Self.tagUUID, value: press.encode())
        }
        return true
    }

    private static func encode(_ battery: SimulatedBattery) -> [UInt8] {
        // SimulatedBattery keeps its level within 0…100, which always encodes.
        (try? E4BatteryLevel(percent: UInt8(clamping: battery.percent)))?.encode() ?? [0]
    }
}

extension E4Stream {
    /// How often the band sends a packet of this stream: `samplesPerPacket / samplesPerSecond`, exactly
    /// (BVP 171.875 ms, accelerometer 187.5 ms, EDA 1.5 s, temperature 1 s).
    var packetInterval: Duration {
        .nanoseconds(Int64(samplesPerPacket) * 1_000_000_000 / Int64(samplesPerSecond))
    }
}

extension SimulatedDeviceKind {
    public static let empaticaE4 = SimulatedDeviceKind(
        name: "empatica_e4",
        summary: "Empatica E4 wristband: sensors 0x3EA0 (BVP, accelerometer, EDA, skin temperature after the start "
            + "command), status 0x3EB0 (battery, modeled tag), command 0x3E70, Device Information"
    ) { configuration throws(SimulatedDeviceConfigurationError) in try SimulatedEmpaticaE4(configuration) }
}
