/// One radio's watchdog, as a pure state machine: fed what the radio looks like every few seconds, it answers the
/// steps to take and the status to report (docs/radios.md, "Watchdog").
///
/// A radio that silently stops is the most common BLE failure in the field: a scanner that keeps `Discovering` but
/// reports nothing, discovery stuck answering `InProgress`, an adapter or a proxy gone. The cure is tried in steps,
/// cheapest first — discovery restarted, then the adapter power-cycled (a proxy: reconnected) — and a radio the steps
/// do not cure is reported failed and retried with a growing wait, never left silently dead. A reset drops the radio's
/// links, so on evidence that could also mean "everyone left the room" (silence alone) it is only taken when the radio
/// holds no connected device.
public struct RadioWatchdog: Sendable {
    public struct Settings: Sendable, Equatable {
        /// No advertisement for this long while discovering, after hearing some lately: the scanner is deaf.
        public var silence: Duration = .seconds(90)
        /// Discovery wanted but not running, or the radio off, for this long: stuck, or switched off behind our back.
        public var grace: Duration = .seconds(15)
        /// Silence is only suspicious in a radio that heard someone within this long before it began listening.
        public var nearbyMemory: Duration = .seconds(600)
        /// The first wait before a failed radio is tried again; it doubles up to `retryLimit`.
        public var retry: Duration = .seconds(60)
        public var retryLimit: Duration = .seconds(900)
        /// The reset is a reconnect (a proxy): the radio is away for a moment after it, which is not news.
        public var resetReconnects = false

        public init() {}
    }

    /// What the radio looks like now.
    public struct Observation: Sendable, Equatable {
        /// The adapter is on the bus; the proxy is connected.
        public var present: Bool
        public var powered: Bool
        /// Someone needs discovery on this radio (a scan, a session looking for its device; a proxy always listens).
        public var scanningWanted: Bool
        public var discovering: Bool
        /// When the radio last delivered an advertisement; nil if never.
        public var lastAdvertisement: ContinuousClock.Instant?
        public var connectedDevices: Int

        public init(present: Bool = true, powered: Bool = true, scanningWanted: Bool = false, discovering: Bool = false,
                    lastAdvertisement: ContinuousClock.Instant? = nil, connectedDevices: Int = 0) {
            self.present = present
            self.powered = powered
            self.scanningWanted = scanningWanted
            self.discovering = discovering
            self.lastAdvertisement = lastAdvertisement
            self.connectedDevices = connectedDevices
        }
    }

    public enum Symptom: String, Sendable, Equatable {
        /// The adapter left the bus; the proxy is not connected.
        case absent
        case unpowered
        /// Discovery is wanted but does not run (StartDiscovery answering InProgress, or stopped by someone else).
        case notDiscovering = "not_discovering"
        /// Discovering, but no advertisement for `silence`.
        case silent
    }

    public enum Step: String, Sendable, Equatable {
        case restartDiscovery = "restart_discovery"
        /// An adapter power-cycled (or powered on); a proxy reconnected.
        case reset
    }

    public enum Action: Sendable, Equatable {
        case restartDiscovery
        case reset
        /// The radio's status changed.
        case report(RadioStatus)
    }

    private enum Phase: Equatable {
        case healthy
        case absent
        case recovering(Symptom, step: Step, at: ContinuousClock.Instant)
        case failed(Symptom, step: Step, at: ContinuousClock.Instant, retryAt: ContinuousClock.Instant, attempts: Int)
    }

    public let settings: Settings
    private var phase = Phase.healthy
    private var since: ContinuousClock.Instant
    /// Steps taken since the start.
    public private(set) var steps = 0
    private var scanningSince: ContinuousClock.Instant?
    private var stalledSince: ContinuousClock.Instant?
    private var unpoweredSince: ContinuousClock.Instant?

    public init(settings: Settings = Settings(), now: ContinuousClock.Instant) {
        self.settings = settings
        since = now
    }

    public var status: RadioStatus {
        switch phase {
        case .healthy: RadioStatus(state: .ok, since: since, steps: steps)
        case .absent: RadioStatus(state: .absent, symptom: .absent, since: since, steps: steps)
        case .recovering(let symptom, let step, _): RadioStatus(state: .recovering, symptom: symptom, step: step, since: since, steps: steps)
        case .failed(let symptom, let step, _, _, _): RadioStatus(state: .failed, symptom: symptom, step: step, since: since, steps: steps)
        }
    }

    /// Looks at the radio once; answers the steps to take now and the status when it changed.
    public mutating func observe(_ radio: Observation, at now: ContinuousClock.Instant) -> [Action] {
        track(radio, at: now)
        let symptom = self.symptom(radio, at: now)
        if symptom == .absent {
            // A proxy being reconnected by our own reset is away for a moment: part of the step, not news.
            guard phase != .absent, !resetUnderWay(at: now) else { return [] }
            return enter(.absent, at: now)
        }
        switch phase {
        case .healthy:
            guard let symptom else { return [] }
            return begin(symptom, at: now)
        case .absent:
            // Back: discovery the gateway held on the old object has to be asked for again.
            return (radio.scanningWanted ? [.restartDiscovery] : []) + enter(.healthy, at: now)
        case .recovering(let first, let step, let at):
            if cured(first, since: at, radio, symptom) { return enter(.healthy, at: now) }
            guard now - at >= wait(first) else { return [] }
            if step == .restartDiscovery, resetAllowed(first, radio) {
                steps += 1
                phase = .recovering(first, step: .reset, at: now)
                return [.reset, .report(status)]
            }
            return enter(.failed(first, step: step, at: at, retryAt: now + settings.retry, attempts: 1), at: now)
        case .failed(let first, _, let at, let retryAt, let attempts):
            if cured(first, since: at, radio, symptom) { return enter(.healthy, at: now) }
            guard now >= retryAt else { return [] }
            let backoff = min(settings.retry * (1 << min(attempts, 16)), settings.retryLimit)
            // Nothing to judge while nobody needs discovery; tried again as soon as someone does.
            guard first == .unpowered || radio.scanningWanted else { return [] }
            let next: Step = resetAllowed(first, radio) ? .reset : .restartDiscovery
            steps += 1
            phase = .failed(first, step: next, at: now, retryAt: now + backoff, attempts: attempts + 1)
            return [next == .reset ? .reset : .restartDiscovery]
        }
    }

    // MARK: Judging

    private mutating func track(_ radio: Observation, at now: ContinuousClock.Instant) {
        let scanning = radio.present && radio.powered && radio.scanningWanted && radio.discovering
        scanningSince = scanning ? scanningSince ?? now : nil
        let stalled = radio.present && radio.powered && radio.scanningWanted && !radio.discovering
        stalledSince = stalled ? stalledSince ?? now : nil
        let unpowered = radio.present && !radio.powered
        unpoweredSince = unpowered ? unpoweredSince ?? now : nil
    }

    private func symptom(_ radio: Observation, at now: ContinuousClock.Instant) -> Symptom? {
        if !radio.present { return .absent }
        if let unpoweredSince { return now - unpoweredSince >= settings.grace ? .unpowered : nil }
        if let stalledSince { return now - stalledSince >= settings.grace ? .notDiscovering : nil }
        guard let scanningSince, let last = radio.lastAdvertisement else { return nil }
        // Heard someone while listening, or shortly before: silence now means the radio, not an empty room.
        let heardLately = scanningSince - last < settings.nearbyMemory
        let quietSince = max(last, scanningSince)
        return heardLately && now - quietSince >= settings.silence ? .silent : nil
    }

    /// Cured only by evidence: an advertisement after the step for silence, discovery running, power back.
    private func cured(_ symptom: Symptom, since step: ContinuousClock.Instant, _ radio: Observation, _ now: Symptom?) -> Bool {
        switch symptom {
        case .silent: (radio.lastAdvertisement.map { $0 > step } ?? false) && now == nil
        case .notDiscovering: radio.discovering && now == nil
        case .unpowered: radio.powered && now == nil
        case .absent: radio.present
        }
    }

    /// Within `grace` of a reset (a reconnect) the watchdog took.
    private func resetUnderWay(at now: ContinuousClock.Instant) -> Bool {
        guard settings.resetReconnects else { return false }
        return switch phase {
        case .recovering(_, .reset, let at), .failed(_, .reset, let at, _, _): now - at < settings.grace
        default: false
        }
    }

    /// Silence alone could be an empty room: a reset, which drops every link of the radio, only when it holds none.
    private func resetAllowed(_ symptom: Symptom, _ radio: Observation) -> Bool {
        symptom != .silent || radio.connectedDevices == 0
    }

    private func wait(_ symptom: Symptom) -> Duration {
        symptom == .silent ? settings.silence : settings.grace
    }

    // MARK: Moving

    private mutating func begin(_ symptom: Symptom, at now: ContinuousClock.Instant) -> [Action] {
        // Power is the one thing a discovery restart cannot bring back.
        let step: Step = symptom == .unpowered ? .reset : .restartDiscovery
        steps += 1
        let report = enter(.recovering(symptom, step: step, at: now), at: now)
        return [step == .reset ? .reset : .restartDiscovery] + report
    }

    private mutating func enter(_ next: Phase, at now: ContinuousClock.Instant) -> [Action] {
        phase = next
        since = now
        return [.report(status)]
    }
}
