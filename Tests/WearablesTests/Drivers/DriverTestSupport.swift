import BlueZ
import SimulatedWearables
import Testing
import Wear2MQTTTesting
import Wearables

/// A simulated device of a catalog kind (`heart_rate_strap`, `bose_frames`, …).
func simulated(_ kind: String, seed: UInt64 = 7, options: [String: SimulationOptionValue] = [:]) throws -> any SimulatedPeripheral {
    let maker = try #require(SimulatedDeviceCatalog.kind(named: kind))
    return try maker.make(SimulatedDeviceConfiguration(seed: seed, options: options))
}

extension DriverHarness {
    /// Whether `subscription_failed` was reported for `characteristic` (a 128-bit UUID).
    func reportedFailure(of characteristic: String) -> Bool {
        recorder.events(named: "subscription_failed").contains { $0["characteristic"]?.text == characteristic }
    }

    /// Waits until at least `count` more samples of `sensor` than now have arrived, woken by each event recorded. The
    /// deadline only guards against a hang: in a full parallel run on 2 cores, CPU-bound suites (fuzzing) can hold both
    /// of the pool's threads for seconds, and the simulated device's timers wait with everything else.
    func samplesFlow(_ sensor: SensorKind, count: Int = 5, timeout: Duration = .seconds(60)) async -> Bool {
        let before = recorder.samples(sensor).count
        return await until(timeout: timeout) { self.recorder.samples(sensor).count >= before + count }
    }

    /// `execute`, again while the driver answers `BUSY` because its session is still starting (it publishes its
    /// capabilities before it has read everything it needs; under a loaded suite that gap lasted seconds), as a
    /// client would; any other error at once. Asked again once the session has moved on since the refused attempt
    /// began (an event emitted, a write made), never on a timer.
    func executeWhenReady(_ command: DeviceCommand) async throws(CommandError) -> DeviceValue {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let seen = progress
            do {
                return try await execute(command)
            } catch where error.code == .busy && ContinuousClock.now < deadline {
                _ = await until(timeout: deadline - .now) { self.progress > seen }
            }
        }
    }

    /// Grows with every event the link emits and every write to the device: the session's steps, as the test sees them.
    private var progress: Int { recorder.events.count + central.writes(to: address).count }
}
