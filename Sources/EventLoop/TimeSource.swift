#if canImport(Glibc)
import Glibc
#endif

/// Where code reads the time and waits for it: the system's clocks in the daemon and the simulator, a test's
/// `ManualClock` in the in-memory test kit, so time-based behaviour (timeouts, backoff, debounce, the site's reports
/// and liveness, a simulated wearable's sample schedule) runs on time the test advances rather than on a loaded
/// machine's wall clock (docs/architecture.md, "Time").
///
/// Two readings, as the code needs both: `now` for schedules and durations (monotonic), `unixMilliseconds` for the
/// timestamps put on messages and state. A manual source moves both together.
public struct TimeSource: Sendable {
    private let readNow: @Sendable () -> ContinuousClock.Instant
    private let readUnixMilliseconds: @Sendable () -> Int64
    private let sleeper: @Sendable (ContinuousClock.Instant) async throws -> Void

    /// `sleepUntil` returns at the deadline, or throws `CancellationError` when the task is cancelled first.
    public init(now: @escaping @Sendable () -> ContinuousClock.Instant,
                unixMilliseconds: @escaping @Sendable () -> Int64,
                sleepUntil: @escaping @Sendable (ContinuousClock.Instant) async throws -> Void) {
        readNow = now
        readUnixMilliseconds = unixMilliseconds
        sleeper = sleepUntil
    }

    public var now: ContinuousClock.Instant { readNow() }

    public var unixMilliseconds: Int64 { readUnixMilliseconds() }

    /// Returns at `deadline` (at once when it passed); throws `CancellationError` when the task is cancelled.
    public func sleep(until deadline: ContinuousClock.Instant) async throws {
        try await sleeper(deadline)
    }

    /// Returns after `duration`; throws `CancellationError` when the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        try await sleeper(readNow() + duration)
    }

    /// The machine's clocks: `ContinuousClock` and the real-time clock.
    public static let system = TimeSource(
        now: { ContinuousClock.now },
        unixMilliseconds: {
            var spec = timespec()
            clock_gettime(CLOCK_REALTIME, &spec)
            return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
        },
        sleepUntil: { deadline in try await Task.sleep(until: deadline, clock: .continuous) })

    /// The machine's monotonic clock with a fixed wall clock: messages carry `unixMilliseconds` whenever they are
    /// made (a test that compares documents).
    public static func system(wallClockFixedAt unixMilliseconds: Int64) -> TimeSource {
        TimeSource(now: { ContinuousClock.now }, unixMilliseconds: { unixMilliseconds },
                   sleepUntil: { deadline in try await Task.sleep(until: deadline, clock: .continuous) })
    }
}
