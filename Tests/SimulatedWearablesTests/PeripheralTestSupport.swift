import Synchronization
import Testing

@testable import Wearables
@testable import SimulatedWearables

/// A link that records what a simulated peripheral pushes; subscribed to everything, as the host is after the
/// central enabled notifications. Shared by the simulated-device tests.
final class RecordingPeripheralLink: PeripheralLink {
    let mtu: Int
    private let pushed = Mutex<[(uuid: BluetoothUUID, value: [UInt8])]>([])

    init(mtu: Int = 23) { self.mtu = mtu }

    func isSubscribed(_ characteristic: BluetoothUUID) async -> Bool { true }
    func notify(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool {
        pushed.withLock { $0.append((characteristic, value)) }
        return true
    }
    func indicate(_ characteristic: BluetoothUUID, value: [UInt8]) async -> Bool { await notify(characteristic, value: value) }
    func disconnect() async {}

    func values(of uuid: BluetoothUUID) -> [[UInt8]] { pushed.withLock { $0.filter { $0.uuid == uuid }.map(\.value) } }
    var count: Int { pushed.withLock { $0.count } }
}

/// Polls `condition` every 5 ms for up to `timeout` (generous: the suite runs in parallel on two cores).
func waitUntil(timeout: Duration = .seconds(30), _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}
