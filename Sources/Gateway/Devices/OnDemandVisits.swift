/// When the gateway holds the link of a device it serves on demand (`link: on_demand`, or `auto` on an ESPHome
/// proxy): a visit every `interval` (which syncs), and one for each command, `connect` or firmware update; the link
/// is let go once nothing happened on it for `linger`, so the radio's connection slot serves another device between
/// visits. A value fed what happened by `DeviceSession`; nothing here sleeps or touches a radio, so every rule is a
/// unit test (Tests/GatewayTests/Lifecycle/OnDemandVisitsTests).
public struct OnDemandVisits: Sendable, Equatable {
    /// What the state document shows of it (`link`).
    public enum Phase: String, Sendable {
        /// Connected on a visit (or held: `auto` on a radio with slots to spare).
        case visiting
        /// Let go after a visit that reached the device: available, not connected.
        case idle
        /// The last attempt did not reach the device.
        case unreachable
    }

    public let interval: Duration
    public let linger: Duration
    /// When the next periodic visit is due; the first is at once.
    public private(set) var nextVisit: ContinuousClock.Instant
    /// Commands waiting for the link or running on it.
    public private(set) var commands = 0
    /// `connect` asked for a visit now.
    public private(set) var requested = false
    /// The last thing that happened on the link: a visit began, a command ended, the driver reported something.
    public private(set) var lastActivity: ContinuousClock.Instant
    /// Keeps the link at least until then whatever happens (a code shown on the device, waiting to be typed in).
    public private(set) var heldUntil: ContinuousClock.Instant?
    public private(set) var phase: Phase?
    /// The periodic visit on the link now, until it has synced or let the link go: the time it was due, which it
    /// is again if the link drops before.
    public private(set) var periodicDue: ContinuousClock.Instant?

    public init(interval: Duration, linger: Duration = Self.defaultLinger, now: ContinuousClock.Instant) {
        self.interval = interval
        self.linger = linger
        nextVisit = now
        lastActivity = now
    }

    /// Long enough for a client that answers a state change with a command (a sync right after a `settings`), short
    /// against the minutes between visits.
    public static let defaultLinger = Duration.seconds(10)
    /// How long a code the device shows keeps the link: the time to read it and type it in.
    public static let codeEntryHold = Duration.seconds(120)

    /// Whether a disconnected session should connect now.
    public func wantsLink(at now: ContinuousClock.Instant) -> Bool { commands > 0 || requested || now >= nextVisit }

    /// The link is up: answers whether this visit is the periodic one, which syncs.
    public mutating func connected(at now: ContinuousClock.Instant) -> Bool {
        phase = .visiting
        requested = false
        lastActivity = now
        guard now >= nextVisit else { return false }
        periodicDue = nextVisit
        nextVisit = now + interval
        return true
    }

    /// The periodic visit's sync is done: a link lost from now on does not make it due again.
    public mutating func periodicSynced() { periodicDue = nil }

    /// The link dropped without being let go. A periodic visit that had not synced yet is due again (retried after
    /// the backoff, `unreachable` meanwhile); otherwise the device was there, as after a let-go.
    /// Answers whether the phase changed (false after a let-go, which already said so).
    @discardableResult
    public mutating func linkLost() -> Bool {
        guard phase == .visiting else { return false }
        if let due = periodicDue {
            nextVisit = due
            periodicDue = nil
            phase = .unreachable
        } else {
            phase = .idle
        }
        return true
    }

    /// An attempt did not reach the device. A periodic visit stays due, so the session retries after its backoff;
    /// a command waiting for the link is told by the session.
    public mutating func attemptFailed() {
        phase = .unreachable
        requested = false
    }

    /// Let go after a visit: the device was there, and is again at the next one.
    public mutating func letGo() {
        phase = .idle
        periodicDue = nil
    }

    public mutating func visitRequested() { requested = true }

    public mutating func commandQueued() { commands += 1 }

    public mutating func commandEnded(at now: ContinuousClock.Instant) {
        commands = max(0, commands - 1)
        noteActivity(at: now)
    }

    public mutating func noteActivity(at now: ContinuousClock.Instant) {
        if now > lastActivity { lastActivity = now }
    }

    public mutating func hold(until deadline: ContinuousClock.Instant) {
        heldUntil = max(heldUntil ?? deadline, deadline)
    }

    public mutating func releaseHold() { heldUntil = nil }

    /// When a connected visit may let the link go: nil while a command waits or runs (ask again when it ends).
    public func letGoTime() -> ContinuousClock.Instant? {
        guard commands == 0 else { return nil }
        let quiet = lastActivity + linger
        guard let heldUntil else { return quiet }
        return max(quiet, heldUntil)
    }
}
