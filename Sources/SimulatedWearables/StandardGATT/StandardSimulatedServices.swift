import EventLoop
import Wearables

/// The Device Information strings a simulated device answers (Device Information Service 1.1), read from the
/// options `manufacturer`, `model`, `serial`, `hardware`, `firmware` and `software`.
struct SimulatedDeviceInformation: Sendable, Equatable {
    var manufacturer: String
    var model: String
    var serial: String
    var hardware: String
    var firmware: String
    var software: String

    init(reading options: inout SimulationOptionReader, defaultModel: String, seed: UInt64)
        throws(SimulatedDeviceConfigurationError)
    {
        manufacturer = try options.string("manufacturer", default: "wear2mqtt simulator")
        model = try options.string("model", default: defaultModel)
        serial = try options.string("serial", default: String(format8: seed))
        hardware = try options.string("hardware", default: "rev A")
        firmware = try options.string("firmware", default: "1.0.0")
        software = try options.string("software", default: "1.0.0")
    }

    /// The Device Information Service 0x180A with one read-only characteristic per string.
    var service: SimulatedService {
        let strings: [(UInt16, String)] = [
            (GATTUUID.Characteristic.manufacturerName, manufacturer), (GATTUUID.Characteristic.modelNumber, model),
            (GATTUUID.Characteristic.serialNumber, serial), (GATTUUID.Characteristic.hardwareRevision, hardware),
            (GATTUUID.Characteristic.firmwareRevision, firmware), (GATTUUID.Characteristic.softwareRevision, software),
        ]
        return SimulatedService(BluetoothUUID(GATTUUID.Service.deviceInformation), characteristics: strings.map {
            SimulatedCharacteristic(BluetoothUUID($0.0), flags: .read, initialValue: DeviceInformationString.encode($0.1))
        })
    }

    /// The encoded value of one of the strings, or nil when `characteristic` is not one of them.
    func value(of characteristic: BluetoothUUID) -> [UInt8]? {
        service.characteristics.first { $0.uuid == characteristic }?.initialValue
    }
}

/// A battery that drains slowly while the simulation runs (Battery Service 1.0, Battery Level 0x2A19), read from
/// the options `battery` (percent at start) and `battery_drain_per_hour`.
struct SimulatedBattery: Sendable, Equatable {
    private(set) var level: Double
    let drainPerSecond: Double

    init(reading options: inout SimulationOptionReader, defaultLevel: Int) throws(SimulatedDeviceConfigurationError) {
        level = Double(try options.int("battery", default: defaultLevel, in: 0...100))
        drainPerSecond = try options.double("battery_drain_per_hour", default: 1, in: 0...100) / 3600
    }

    /// The level in whole percent, as the characteristic reports it.
    var percent: Int { Int(level.rounded(.up)) }

    var encoded: [UInt8] {
        // A level within 0...100 always encodes; the initializer and `drain` keep it there.
        (try? BatteryLevel(percent: percent))?.encode() ?? [0]
    }

    /// Drains for `seconds`; true when the reported percentage changed (worth a notification).
    mutating func drain(for seconds: Double) -> Bool {
        let before = percent
        level = max(0, level - drainPerSecond * seconds)
        return percent != before
    }

    static let levelUUID = BluetoothUUID(GATTUUID.Characteristic.batteryLevel)

    /// The Battery Service 0x180F with Battery Level readable and notifiable.
    var service: SimulatedService {
        SimulatedService(BluetoothUUID(GATTUUID.Service.battery), characteristics: [
            SimulatedCharacteristic(Self.levelUUID, flags: [.read, .notify], initialValue: encoded),
        ])
    }
}

extension String {
    /// Eight upper-case hex digits of the low 32 bits, for default serial numbers.
    init(format8 value: UInt64) {
        let hex = String(value & 0xFFFF_FFFF, radix: 16, uppercase: true)
        self = String(repeating: "0", count: 8 - hex.count) + hex
    }
}

/// How often a periodic behaviour ticks, from the option `rate_hz`.
struct SimulatedRate: Sendable, Equatable {
    let hertz: Double

    init(reading options: inout SimulationOptionReader, default fallback: Double) throws(SimulatedDeviceConfigurationError) {
        hertz = try options.double("rate_hz", default: fallback, in: 0.001...200)
    }

    var interval: Duration { .nanoseconds(Int64((1_000_000_000 / hertz).rounded())) }
    var seconds: Double { 1 / hertz }
}

/// Sleeps from one tick to the next on a fixed schedule of `time`, so a 200 Hz stream averages 200 Hz even when a
/// tick runs late. A stream whose task was not scheduled in time (a loaded host: a whole test suite on two cores)
/// gets the ticks it missed back to back, without sleeping, up to `maximumCatchUp` of them: a device whose clock
/// kept running sends them late rather than never. Behind by more than that, the schedule starts again from now.
/// On a test's manual clock every tick the advanced span holds comes, however loaded the machine is.
struct TickSchedule {
    private let interval: Duration
    private let time: TimeSource
    private var next: ContinuousClock.Instant
    /// One second of ticks, at least one: a burst the notification paths take without loss.
    private let maximumCatchUp: Duration

    init(interval: Duration, time: TimeSource) {
        self.interval = interval
        self.time = time
        next = time.now + interval
        maximumCatchUp = max(interval, .seconds(1))
    }

    /// Waits for the next tick (at once when it is already due); false once the task is cancelled.
    mutating func waitForNextTick() async -> Bool {
        if next > time.now {
            do {
                try await time.sleep(until: next)
            } catch {
                return false
            }
        }
        next += interval
        let now = time.now
        if now - next > maximumCatchUp { next = now }
        return !Task.isCancelled
    }
}
