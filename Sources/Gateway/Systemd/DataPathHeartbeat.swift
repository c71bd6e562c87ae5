import EventLoop
import Synchronization

/// Whether the data-path loop still turns, for `GET /health` (a container's health check, Home Assistant's add-on
/// watchdog). The beat is a timer of the data-path loop itself, as the systemd watchdog's pings are: every notification
/// socket and the broker's socket are on that loop, so a loop that hangs stops the beat while the HTTP server, on a
/// thread of its own, goes on answering — with 503.
public final class DataPathHeartbeat: Sendable {
    /// How often the loop beats: one wake-up every 2 s of an idle loop.
    public let interval: Duration
    /// A beat older than this means the loop stalled (several beats missed, not one late one).
    public let stalledAfter: Duration
    private let origin: ContinuousClock.Instant
    /// Nanoseconds after `origin` of the last beat.
    private let lastBeat = Atomic<Int64>(0)

    public init(interval: Duration = .seconds(2), stalledAfter: Duration = .seconds(10),
                origin: ContinuousClock.Instant = .now) {
        self.interval = interval
        self.stalledAfter = stalledAfter
        self.origin = origin
    }

    /// Starts beating on `loop`; the chain of timers ends with the loop.
    public func start(on loop: EventLoop) {
        loop.execute { [self] in beat(on: loop) }
    }

    /// Records a beat at `instant` (the loop's timer calls it; tests call it with a clock of their own).
    public func beat(at instant: ContinuousClock.Instant = .now) {
        lastBeat.store(Self.nanoseconds(instant - origin), ordering: .relaxed)
    }

    /// True while the last beat is recent; false before the first one and after a stall.
    public func isBeating(at instant: ContinuousClock.Instant = .now) -> Bool {
        let last = lastBeat.load(ordering: .relaxed)
        guard last > 0 else { return false }
        return Self.nanoseconds(instant - origin) - last <= Self.nanoseconds(stalledAfter)
    }

    private func beat(on loop: EventLoop) {
        beat()
        loop.schedule(at: .now + interval) { [self] in beat(on: loop) }
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return max(1, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
