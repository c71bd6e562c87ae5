import Synchronization

/// A device session's record commits — records out, then the cursor that says they are out — as steps its end can
/// wait for. A handover reads the device's cursors when the session stops; a commit half done at that moment
/// (records published, cursor not yet stored) made the next owner download the same page again. Closing the gate
/// refuses new commits (their records stay on the device for the next owner) and tells when the last one in flight
/// has ended.
public final class RecordCommits: Sendable {
    private struct State {
        var closed = false
        var inFlight = 0
        var whenSettled: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())

    public init() {}

    /// Starts a commit; false once the gate is closed.
    func begin() -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.inFlight += 1
            return true
        }
    }

    func end() {
        let settled = state.withLock { state -> (@Sendable () -> Void)? in
            state.inFlight -= 1
            guard state.closed, state.inFlight == 0 else { return nil }
            defer { state.whenSettled = nil }
            return state.whenSettled
        }
        settled?()
    }

    /// Refuses commits from now on. True when none is in flight; otherwise `whenSettled` runs once the last ends.
    public func close(whenSettled: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            state.closed = true
            guard state.inFlight > 0 else { return true }
            state.whenSettled = whenSettled
            return false
        }
    }
}
