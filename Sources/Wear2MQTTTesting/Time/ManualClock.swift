import EventLoop
import Synchronization

/// Time a test moves by hand, in the spirit of swift-nio's `EmbeddedEventLoop.advanceTime`: nothing that sleeps on
/// it (a session's backoff, a request's timeout, the site's reports, a simulated wearable's sample schedule) wakes
/// until the test calls `advance`, however loaded the machine is. Give its `timeSource` to the gateway core, the
/// in-memory central and the simulated peripherals.
///
/// `advance(by:)` moves to each sleeper's deadline in turn and lets the woken tasks run before moving on, so a timer
/// that re-arms itself (a 50 Hz sample schedule) fires as often as the advanced span holds. A sleep whose deadline
/// already passed returns at once.
public final class ManualClock: Sendable {
    private struct Sleeper {
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var offset: Duration = .zero
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
        /// Tokens whose task was cancelled before its sleeper was registered.
        var cancelled: Set<UInt64> = []
    }

    private let state = Mutex(State())
    private let origin = ContinuousClock.now
    private let unixOrigin: Int64
    /// Wakes tests waiting for a sleeper to arm (`sleepers(atLeast:)`).
    private let armed = ChangeNotifier()

    /// `unixMilliseconds`: the wall clock at the start, moving with the monotonic one.
    public init(unixMilliseconds: Int64 = 1_750_000_000_000) {
        unixOrigin = unixMilliseconds
    }

    public var now: ContinuousClock.Instant { origin + state.withLock { $0.offset } }

    public var unixMilliseconds: Int64 {
        let offset = state.withLock { $0.offset }
        return unixOrigin + offset.components.seconds * 1000 + offset.components.attoseconds / 1_000_000_000_000_000
    }

    /// How much time the test has advanced.
    public var elapsed: Duration { state.withLock { $0.offset } }

    /// The clock as the code under test reads it.
    public var timeSource: TimeSource {
        TimeSource(now: { [self] in now }, unixMilliseconds: { [self] in unixMilliseconds },
                   sleepUntil: { [self] deadline in try await sleep(until: deadline) })
    }

    /// Returns once the clock reaches `deadline` (at once if it has); throws `CancellationError` if the task is
    /// cancelled first.
    public func sleep(until deadline: ContinuousClock.Instant) async throws {
        let id = state.withLock { state -> UInt64? in
            guard origin + state.offset < deadline else { return nil }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return try Task.checkCancellation() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate = state.withLock { state -> (any Error)?? in
                    if state.cancelled.remove(id) != nil { return .some(CancellationError()) }
                    if origin + state.offset >= deadline { return .some(nil) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                switch immediate {
                case .some(.some(let error)): continuation.resume(throwing: error)
                case .some(.none): continuation.resume()
                case .none: armed.changed()
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Returns once the clock has moved `duration` on from now.
    public func sleep(for duration: Duration) async throws {
        try await sleep(until: now + duration)
    }

    /// Moves the clock forward by `duration`, stopping at each sleeper's deadline on the way to wake it and let what
    /// it does run (including arming its next timer) before going on.
    public func advance(by duration: Duration) async {
        _ = await advance(by: duration, rearmed: nil)
    }

    /// Moves the clock forward by `duration` as `advance(by:)` does, but at each deadline also waits until `timers`
    /// tasks sleep on the clock again before going on. Where `timers` is exactly the periodic tasks running (a
    /// sample tick), each has run for that deadline and armed its next one however late the machine runs it, so
    /// every tick fires at its own time and none is merged into a later one; where other sleepers keep the count up
    /// it is the yields of `advance(by:)`. False if the count was not reached within `timeout` (a failure guard in
    /// real time); the clock is then at the target all the same.
    @discardableResult
    public func advance(by duration: Duration, rearming timers: Int, timeout: Duration = .seconds(30)) async -> Bool {
        await advance(by: duration, rearmed: (timers, timeout))
    }

    private func advance(by duration: Duration, rearmed: (timers: Int, timeout: Duration)?) async -> Bool {
        let target = now + duration
        var allRearmed = true
        while true {
            let due = state.withLock { state -> [Sleeper]? in
                let next = state.sleepers.values.map(\.deadline).min()
                guard let next, next <= target else {
                    state.offset = target - origin
                    return nil
                }
                state.offset = max(state.offset, next - origin)
                let ids = state.sleepers.filter { $0.value.deadline <= next }.map(\.key)
                return ids.compactMap { state.sleepers.removeValue(forKey: $0) }
            }
            guard let due else { break }
            for sleeper in due { sleeper.continuation.resume() }
            if let rearmed, allRearmed {
                allRearmed = await sleepers(atLeast: rearmed.timers, timeout: rearmed.timeout)
            }
            // Let the woken tasks run up to their next suspension (most re-arm a timer at once): all a one-shot
            // timer gets, and what a periodic one gets when others keep the count up meanwhile.
            for _ in 0..<20 { await Task.yield() }
        }
        for _ in 0..<20 { await Task.yield() }
        return allRearmed
    }

    /// Waits (real time) until no task has armed a timer on the clock for `quiet`, at most `limit`: the work the last
    /// `advance` woke has reached its next sleep. Moving on sooner, a loaded machine's clock would race the code under
    /// test — a reply still on its way when the request's timeout comes due.
    public func settled(quiet: Duration = .milliseconds(20), limit: Duration = .seconds(2)) async {
        await armed.quiet(for: quiet, atMost: limit)
    }

    /// How many tasks sleep on the clock now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Waits (real time, `timeout` as a failure guard) until at least `count` tasks sleep on the clock: the point at
    /// which the code under test has armed the timers a test is about to fire.
    @discardableResult
    public func sleepers(atLeast count: Int, timeout: Duration = .seconds(30)) async -> Bool {
        await armed.until(timeout: timeout) { sleeperCount >= count }
    }
}
