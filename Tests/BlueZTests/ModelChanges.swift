import BlueZ
import Wear2MQTTTesting

/// Wakes a test's wait on every change the client reports (`BlueZClient.events()`: devices, GATT objects, bluetoothd
/// leaving or coming back), so a condition on the client's model is checked when the model changes, not on a timer.
/// The client updates its model before it reports the change.
final class ModelChanges: Sendable {
    let changes = ChangeNotifier()
    private let feeder: Task<Void, Never>

    init(_ client: BlueZClient) {
        let events = client.events()
        let changes = changes
        // Unstructured: forwards the client's events for as long as the test runs; cancelled by `stop()`.
        feeder = Task {
            for await _ in events { changes.changed() }
        }
    }

    /// Returns true as soon as `condition` holds, re-checked on every change; false if it still does not after
    /// `timeout` (a failure guard in real time).
    func until(timeout: Duration = .seconds(20), _ condition: () async throws -> Bool) async rethrows -> Bool {
        try await changes.until(timeout: timeout, condition)
    }

    func stop() { feeder.cancel() }
}
