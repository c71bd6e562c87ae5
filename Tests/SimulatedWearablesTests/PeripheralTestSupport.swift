import Synchronization
import Testing
import Wear2MQTTTesting

@testable import Wearables
@testable import SimulatedWearables

/// A link that records what a simulated peripheral pushes and how often it hung up; subscribed to everything but
/// `unsubscribed`, whose notifications it refuses as the host does. A hang-up ends nothing here: the test reads
/// `hangUps`. Shared by the simulated-device tests; `until` waits are woken by every push and hang-up.
final class RecordingPeripheralLink: PeripheralLink {
    let mtu: Int
    private let unsubscribed: Set<BluetoothUUID>
    private let state = Mutex<(pushed: [(uuid: BluetoothUUID, value: [UInt8])], hangUps: Int)>(([], 0))
    let changes = ChangeNotifier()

    init(mtu: Int = 23, unsubscribed: Set<BluetoothUUID> = []) {
        self.mtu = mtu
        self.unsubscribed = unsubscribed
    }

    func isSubscribed(_ characteristic: BluetoothUUID) async -> Bool { !unsubscribed.contains(characteristic) }
    func notify(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool {
        guard !unsubscribed.contains(characteristic) else { return false }
        state.withLock { $0.pushed.append((characteristic, value)) }
        changes.changed()
        return true
    }
    func indicate(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool { await notify(characteristic, value: value) }
    func disconnect() async {
        state.withLock { $0.hangUps += 1 }
        changes.changed()
    }

    func values(of uuid: BluetoothUUID) -> [[UInt8]] { state.withLock { $0.pushed.filter { $0.uuid == uuid }.map(\.value) } }
    var count: Int { state.withLock { $0.pushed.count } }
    var hangUps: Int { state.withLock { $0.hangUps } }
    func clear() { state.withLock { $0.pushed = [] } }

    /// Returns true as soon as `condition` holds, re-checked after every push and hang-up; false after `timeout`, a
    /// failure guard in real time.
    func until(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async rethrows -> Bool {
        try await changes.until(timeout: timeout, condition)
    }
}

/// A fresh manual clock and the configuration of a device that runs on it.
func clocked(seed: UInt64 = 1, options: [String: SimulationOptionValue] = [:], name: String? = nil, address: String? = nil,
             clock: ManualClock) -> SimulatedDeviceConfiguration {
    SimulatedDeviceConfiguration(name: name, seed: seed, options: options, address: address, time: clock.timeSource)
}

/// Runs `peripheral`'s behaviour on `link`, as the host does when a central connects, and returns once `timers`
/// tasks sleep on `clock`: the peripheral is connected and its periodic work armed.
func run(_ peripheral: any SimulatedPeripheral, on link: RecordingPeripheralLink, clock: ManualClock,
         timers: Int = 1) async throws -> Task<Void, Never> {
    let task = Task { await peripheral.run(on: link) }
    try #require(await clock.sleepers(atLeast: timers), "the peripheral did not arm its \(timers) timer(s)")
    return task
}

extension ManualClock {
    /// Moves time on by `duration`, waiting at each deadline until `timers` tasks sleep on the clock again: every
    /// tick the span held has run, so what the peripheral sent for that span is all on the link. Half a second at a
    /// time, so a tick task the machine ran late never falls a second behind (where `TickSchedule` would start
    /// again) even where other sleepers keep the count up.
    func advance(by duration: Duration, timers: Int) async {
        var left = duration
        while left > .zero {
            let step = min(left, .milliseconds(500))
            #expect(await advance(by: step, rearming: timers), "\(sleeperCount) of \(timers) timers armed again")
            left -= step
        }
    }
}
