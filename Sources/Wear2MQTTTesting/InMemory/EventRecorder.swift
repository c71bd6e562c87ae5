import Synchronization
import Wearables

/// Every event a device link emitted, in order, for assertions.
public final class EventRecorder: Sendable {
    private let recorded = Mutex<[WearableEvent]>([])
    /// Told of every event recorded, after it is recorded: what a test's wait for an event wakes on.
    public let changes = ChangeNotifier()

    public init() {}

    public func record(_ event: WearableEvent) {
        recorded.withLock { $0.append(event) }
        changes.changed()
    }

    public var events: [WearableEvent] { recorded.withLock { $0 } }

    public func samples(_ sensor: SensorKind) -> [SensorSample] {
        events.compactMap { if case .sample(let sample) = $0, sample.sensor == sensor { sample } else { nil } }
    }

    /// The `details` of every `event` called `name`.
    public func events(named name: String) -> [[String: DeviceValue]] {
        events.compactMap { if case .event(name, _, let details) = $0 { details } else { nil } }
    }

    /// Every state patch merged, later values winning: the device state as the gateway would hold it.
    public var state: [String: DeviceValue] {
        events.reduce(into: [:]) { state, event in
            if case .state(let patch) = event { state.merge(patch) { $1 } }
        }
    }

    public var gestures: [String] {
        events.compactMap { if case .gesture(let name, _) = $0 { name } else { nil } }
    }

    public var records: [FitnessRecord] {
        events.compactMap { if case .record(let record) = $0 { record } else { nil } }
    }
}
