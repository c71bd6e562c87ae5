import BlueZ
import Simulator
import Wearables
import SimulatedWearables

/// The simulated devices of one measurement: sequenced heart-rate sensors at a common rate, and Bose Frames
/// streaming some of their IMU sensors at 20 ms (50 Hz each).
struct Workload: Sendable, Codable, Equatable {
    var straps: Int
    /// Notifications per second per sensor; 0: connected and silent after one measurement.
    var rateHz: Double
    var bose: Int
    /// Sensors each Bose device streams at 20 ms: accelerometer, gyroscope, then rotation, game rotation, … (1…7).
    var boseSensors: Int

    static let boseRateHz = 50.0

    var deviceCount: Int { straps + bose }
    var heartRateOffered: Double { Double(straps) * rateHz }
    var boseOffered: Double { Double(bose * boseSensors) * Self.boseRateHz }
    var offeredSamplesPerSecond: Double { heartRateOffered + boseOffered }

    /// The same heart-rate sensors without the Bose glasses: what the raw relay carries.
    var strapsOnly: Workload { Workload(straps: straps, rateHz: rateHz, bose: 0, boseSensors: boseSensors) }

    var summary: String {
        var text = rateHz > 0 ? "\(straps) HR × \(Self.format(rateHz)) Hz" : "\(straps) HR silent"
        if bose > 0 { text += " + \(bose) Bose × \(boseSensors)×50 Hz" }
        return text
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    // Addresses carry the index in their last two bytes; ids in topics carry it in decimal.
    static func strapAddress(_ index: Int) -> String { address(prefix: "C0:BE:00:00", index) }
    static func boseAddress(_ index: Int) -> String { address(prefix: "C0:B5:00:00", index) }
    static func strapID(_ index: Int) -> String { "hr" + pad(index) }
    static func boseID(_ index: Int) -> String { "imu" + pad(index) }

    private static func address(prefix: String, _ index: Int) -> String {
        func hex(_ byte: Int) -> String {
            let text = String(byte, radix: 16, uppercase: true)
            return text.count == 1 ? "0" + text : text
        }
        return "\(prefix):\(hex(index >> 8)):\(hex(index & 0xFF))"
    }

    private static func pad(_ index: Int) -> String {
        let text = String(index)
        return String(repeating: "0", count: max(0, 3 - text.count)) + text
    }

    /// The Bose sensors enabled, in the order they are added.
    var boseSensorNames: [String] { BoseSensor.allCases.prefix(boseSensors).map(\.kind.rawValue) }

    /// The simulator's scenario: one adapter with room for every device (the simulator's default of 7 links is
    /// a controller's; the benchmark lifts it), the bench sensors and counted Bose Frames. With `strapsInRange`
    /// false the heart-rate sensors are left out: ESPHome proxies hear them instead (`BenchProxies`).
    func scenario(ledger: SendLedger, records: RecordCounter, strapsInRange: Bool = true) -> Scenario {
        var adapter = AdapterSettings()
        adapter.maxConnections = max(7, deviceCount)
        var devices = strapsInRange ? strapDevices(0..<straps, ledger: ledger) : []
        let sensors = boseSensors
        for index in 0..<bose {
            let kind = SimulatedDeviceKind(name: "bench_bose_frames", summary: "Bose Frames, records counted") { configuration
                throws(SimulatedDeviceConfigurationError) in
                RecordCountingPeripheral(try SimulatedDeviceKind.boseFrames.make(configuration), counter: records)
            }
            devices.append(DeviceSettings(kind: kind, address: BluetoothAddress(Self.boseAddress(index))!,
                                          advertisingInterval: .milliseconds(200),
                                          options: ["max_active_sensors": .int(max(3, sensors))]))
        }
        return Scenario(seed: 1, adapter: adapter, devices: devices)
    }

    /// The sequenced heart-rate sensors `indices` (their ledger and topic index), advertising every 200 ms.
    func strapDevices(_ indices: Range<Int>, ledger: SendLedger) -> [DeviceSettings] {
        indices.map { index in
            let name = "BENCH-HR-\(index)"
            let rate = rateHz
            let kind = SimulatedDeviceKind(name: "bench_heart_rate", summary: "sequenced heart-rate sensor") { _ in
                SequencedHeartRateSensor(index: index, name: name, rateHz: rate, ledger: ledger)
            }
            return DeviceSettings(kind: kind, address: BluetoothAddress(Self.strapAddress(index))!,
                                  advertisingInterval: .milliseconds(200))
        }
    }
}
