/// What the watchdog says of a radio: in `bridge/info` (each adapter's `state`), `bridge/health`, `bridge/event`
/// `radio_changed`, the metrics and Home Assistant's Radio problem sensor.
public struct RadioStatus: Sendable, Equatable {
    public enum State: String, Sendable, Equatable {
        case ok
        /// A step is under way.
        case recovering
        /// The steps did not cure it; tried again with a growing wait.
        case failed
        /// The adapter left the bus, or the proxy is not connected.
        case absent
    }

    public var state: State
    public var symptom: RadioWatchdog.Symptom?
    /// The step under way, or the last one tried.
    public var step: RadioWatchdog.Step?
    public var since: ContinuousClock.Instant
    /// Steps taken since the start.
    public var steps: Int

    public init(state: State, symptom: RadioWatchdog.Symptom? = nil, step: RadioWatchdog.Step? = nil,
                since: ContinuousClock.Instant, steps: Int = 0) {
        self.state = state
        self.symptom = symptom
        self.step = step
        self.since = since
        self.steps = steps
    }

    /// A sentence for people: what is wrong and what is being done.
    public func reason(kind: RadioKind, silence: Duration) -> String? {
        guard let symptom else { return nil }
        let what: String = switch (symptom, kind) {
        case (.absent, .adapter): "the adapter is gone from BlueZ"
        case (.absent, .proxy): "the proxy is not connected"
        case (.unpowered, _): "the adapter is powered off"
        case (.notDiscovering, _): "discovery does not start (InProgress, or stopped by someone else)"
        case (.silent, _): "no advertisements for \(silence.components.seconds) s while discovering"
        }
        let doing: String? = switch step {
        case .restartDiscovery?: "discovery restarted"
        case .reset? where kind == .proxy: "reconnected"
        case .reset? where symptom == .unpowered: "powered on"
        case .reset?: "power-cycled"
        case nil: nil
        }
        return doing.map { "\(what); \($0)" } ?? what
    }
}

/// Whether a radio is a local adapter or an ESPHome proxy: the steps are named after what they do to it.
public enum RadioKind: String, Sendable, Equatable {
    case adapter
    case proxy = "esphome"
}
