import Wearables

/// The options of a simulated PineTime (`pinetime_infinitime`), read from its scenario:
///
/// - `firmware` ("1.16.0"): the Firmware Revision, which decides the GATT table as the releases did — Local Time
///   Information from 1.12.0, Simple Weather from 1.14.0 (message version 1, with sun times, read from 1.16.0;
///   1.14–1.15 ignore it, as the firmware does). Before 1.7.0 there is no motion service. At least 1.0.0.
/// - `battery` (80), `battery_drain_per_hour` (1), `heart_rate` (72, resting bpm), `steps` (1200, at connect),
///   `cadence_spm` (105; 0 stands still), `motion_hz` (10, raw motion notifications a second).
/// - `fail_writes` (`none`): `time`, `notify`, `music`, `navigation` or `weather` makes every write to that part
///   answer ATT 0x0E (unlikely error) — a fault to show how the gateway reports a watch that refuses.
struct SimulatedPineTimeOptions: Sendable {
    enum FailingPart: String, CaseIterable, Sendable {
        case none, time, notify, music, navigation, weather
    }

    var firmware: String
    var version: InfiniTimeFirmwareVersion
    var heartRate: Double
    var steps: UInt32
    var cadence: Double
    var motionHertz: Double
    var failing: FailingPart

    init(reading options: inout SimulationOptionReader) throws(SimulatedDeviceConfigurationError) {
        firmware = try options.string("firmware", default: "1.16.0")
        guard let version = InfiniTimeFirmwareVersion(revision: firmware),
              version >= InfiniTimeFirmwareVersion(major: 1, minor: 0, patch: 0) else {
            throw .invalidOption(key: "firmware", reason: "must be an InfiniTime release from 1.0.0, such as \"1.16.0\"")
        }
        self.version = version
        heartRate = try options.double("heart_rate", default: 72, in: 30...220)
        steps = UInt32(try options.int("steps", default: 1200, in: 0...1_000_000))
        cadence = try options.double("cadence_spm", default: 105, in: 0...220)
        motionHertz = try options.double("motion_hz", default: 10, in: 0.1...50)
        let part = try options.string("fail_writes", default: "none", allowed: FailingPart.allCases.map(\.rawValue))
        failing = FailingPart(rawValue: part) ?? .none
    }

    var hasLocalTime: Bool { version >= .localTimeInformation }
    var hasSimpleWeather: Bool { version >= .simpleWeather }
    var readsWeatherVersion1: Bool { version >= .weatherSunTimes }
    var hasMotion: Bool { version >= InfiniTimeFirmwareVersion(major: 1, minor: 7, patch: 0) }
}
