/// The link to the broker as a value: whether an attempt is under way, the link up, a reconnect waiting, a close
/// draining or the connection over, and what to do about each thing that happens to it. `MosquittoConnection`
/// feeds it libmosquitto's results and its tick, and carries out the actions it answers.
///
/// It does no I/O, takes no lock and reads no clock (every instant is passed in), so each transition is a unit
/// test (Tests/MQTTTests/MQTTLinkStateMachineTests). It knows nothing of queues, subscriptions or the spool:
/// whether a close has drained is asked of the caller. It replaces the connection's loose flags (link, ever
/// connected, fatal error, connect in flight, closing, finished, next attempt), whose combinations were implicit.
struct MQTTLinkStateMachine: Sendable, Equatable {
    typealias Instant = ContinuousClock.Instant

    enum State: Sendable, Equatable {
        /// Started, never tried: the first tick connects.
        case idle
        case connecting(since: Instant, Attempt)
        case connected
        /// The link is down; the tick connects again from `until` on.
        case waitingToReconnect(until: Instant)
        /// `close` was asked: nothing new is tried. Ends once the link is down (or drained), or at the deadline.
        case closing(deadline: Instant, link: ClosingLink)
        /// Retrying cannot help. Ends at the next tick, outside libmosquitto's callbacks (which found it).
        case failed(MQTTError)
        /// Over: the handle is gone, nothing happens any more.
        case finished
    }

    enum Attempt: Sendable, Equatable {
        /// libmosquitto's blocking connect (DNS, TCP, TLS, CONNECT) runs on a helper thread: the handle is its alone.
        case opening
        /// CONNECT is sent; the CONNACK is awaited on the loop, for at most the connect timeout.
        case awaitingConnack
    }

    /// What a close waits for.
    enum ClosingLink: Sendable, Equatable {
        /// An attempt's helper thread still holds the handle: nothing ends before it returns.
        case attemptInFlight
        /// Up: the final messages, the ring and the spool drain until acknowledged or the deadline.
        case up
        /// Nothing to drain (an attempt awaiting its CONNACK counts as down: it is dropped, not disconnected).
        case down
    }

    enum Action: Sendable, Equatable {
        case none
        /// Start an attempt on a helper thread; its return is `socketOpened` or `connectFailed`.
        case connect
        /// The CONNACK did not come within the connect timeout: shut the socket down (`linkLost` follows).
        case abandonAttempt
        /// The link is up: resubscribe and tell the client (its `onConnect` hooks).
        case reportConnected
        /// The link went down; the client is told. `retryAt` nil: closing, no retry.
        case reportLost(retryAt: Instant?)
        /// An attempt failed before the link was up: only logged. `retryAt` nil: closing, no retry.
        case reportUnreachable(retryAt: Instant?)
        /// The broker refused credentials it accepted before (a password being rotated): logged, and retried.
        case warnCredentialsRefused
        /// A close while up: its final messages go out now.
        case sendFinalMessages
        /// The close is over: DISCONNECT first if `disconnect`, then end with `closed`.
        case finishClosed(disconnect: Bool)
        /// End with the fatal error.
        case finishFailed(MQTTError)
    }

    private(set) var state = State.idle {
        didSet { (isConnected, isAttemptInFlight, isFinished) = Self.flags(of: state) }
    }
    private(set) var backoff: ReconnectBackoff
    /// A link was up once in this run: from then on a TLS failure or refused credentials are retried.
    private(set) var hasConnected = false
    private let connectTimeout: Duration
    /// The credentials worked in an earlier run (remembered by the gateway): refusals are retried from the start.
    private let credentialsAcceptedBefore: Bool

    init(backoff: ReconnectBackoff, connectTimeout: Duration, credentialsAcceptedBefore: Bool) {
        self.backoff = backoff
        self.connectTimeout = connectTimeout
        self.credentialsAcceptedBefore = credentialsAcceptedBefore
    }

    // MARK: What the connection asks

    // The connection asks these for every message. They are stored, set whenever `state` changes: reading a stored
    // field through the connection's class reads one byte, where a computed one copies the whole machine first.

    /// Messages go to libmosquitto now (else they wait in the ring or the spool).
    private(set) var isConnected = false
    /// The helper thread holds the handle: the loop must not touch it.
    private(set) var isAttemptInFlight = false
    private(set) var isFinished = false

    private static func flags(of state: State) -> (connected: Bool, attemptInFlight: Bool, finished: Bool) {
        switch state {
        case .connected, .closing(_, .up): (true, false, false)
        case .connecting(_, .opening), .closing(_, .attemptInFlight): (false, true, false)
        case .finished: (false, false, true)
        default: (false, false, false)
        }
    }

    // MARK: Events

    /// The loop's periodic look (and every step): whatever is due now. `drained` is asked only while a close
    /// waits on an up link.
    mutating func tick(now: Instant, drained: @autoclosure () -> Bool) -> Action {
        switch state {
        case .idle:
            state = .connecting(since: now, .opening)
            return .connect
        case .waitingToReconnect(let until):
            guard now >= until else { return .none }
            state = .connecting(since: now, .opening)
            return .connect
        case .connecting(let since, .awaitingConnack):
            return now - since > connectTimeout ? .abandonAttempt : .none
        case .connecting(_, .opening), .connected, .finished, .closing(_, .attemptInFlight):
            return .none
        case .closing(_, .down):
            state = .finished
            return .finishClosed(disconnect: false)
        case .closing(let deadline, .up):
            guard drained() || now >= deadline else { return .none }
            state = .finished
            return .finishClosed(disconnect: true)
        case .failed(let error):
            state = .finished
            return .finishFailed(error)
        }
    }

    /// The helper thread's connect returned success: CONNECT is on its way.
    mutating func socketOpened() -> Action {
        switch state {
        case .connecting(let since, .opening): state = .connecting(since: since, .awaitingConnack)
        case .closing(let deadline, .attemptInFlight): state = .closing(deadline: deadline, link: .down)
        default: break
        }
        return .none
    }

    /// The helper thread's connect failed. `tlsFailure`: the handshake's reason, when that is what failed.
    mutating func connectFailed(now: Instant, tlsFailure: String?) -> Action {
        switch state {
        case .connecting(_, .opening), .closing(_, .attemptInFlight):
            if let tlsFailure, !hasConnected {
                // A close waiting for this attempt ends with the error too: the settings need fixing either way.
                state = .failed(.tlsFailure(tlsFailure))
                return .none
            }
        default:
            return .none
        }
        if case .closing(let deadline, _) = state {
            state = .closing(deadline: deadline, link: .down)
            return .reportUnreachable(retryAt: nil)
        }
        return .reportUnreachable(retryAt: waitToReconnect(now: now))
    }

    /// The TLS handshake failed on the loop (libmosquitto reports it while reading or writing the socket).
    mutating func tlsFailureSeen(_ reason: String) -> Action {
        switch state {
        case .finished, .failed, .idle: break
        default: if !hasConnected { state = .failed(.tlsFailure(reason)) }
        }
        return .none
    }

    mutating func connackAccepted() -> Action {
        guard case .connecting(_, .awaitingConnack) = state else { return .none }
        state = .connected
        hasConnected = true
        backoff.reset()
        return .reportConnected
    }

    /// The broker refused the connection. `credentials`: its reason, when the refusal is about our credentials.
    /// The link stays as it is: libmosquitto's disconnect follows.
    mutating func connackRefused(credentials: String?) -> Action {
        guard case .connecting(_, .awaitingConnack) = state, let credentials else { return .none }
        if !hasConnected && !credentialsAcceptedBefore {
            state = .failed(.authenticationRefused(reason: credentials))
            return .none
        }
        return .warnCredentialsRefused
    }

    /// The socket closed or libmosquitto disconnected. `cleanly`: with reason 0, which while closing is our own
    /// DISCONNECT (and not news to anyone). While an attempt is opening its own return says how it went.
    mutating func linkLost(now: Instant, cleanly: Bool = false) -> Action {
        switch state {
        case .connected:
            return .reportLost(retryAt: waitToReconnect(now: now))
        case .connecting(_, .awaitingConnack):
            return .reportUnreachable(retryAt: waitToReconnect(now: now))
        case .closing(let deadline, .up):
            state = .closing(deadline: deadline, link: .down)
            return cleanly ? .none : .reportLost(retryAt: nil)
        case .idle, .connecting(_, .opening), .waitingToReconnect, .closing, .failed, .finished:
            return .none
        }
    }

    /// `close` was asked: a later close moves the deadline (and sends its own final messages).
    mutating func close(deadline: Instant) -> Action {
        switch state {
        case .connected, .closing(_, .up):
            state = .closing(deadline: deadline, link: .up)
            return .sendFinalMessages
        case .connecting(_, .opening), .closing(_, .attemptInFlight):
            state = .closing(deadline: deadline, link: .attemptInFlight)
        case .idle, .waitingToReconnect, .connecting(_, .awaitingConnack), .closing(_, .down):
            state = .closing(deadline: deadline, link: .down)
        case .failed, .finished:
            break
        }
        return .none
    }

    // MARK: Transitions

    /// Counts a failure in the backoff and waits its delay.
    private mutating func waitToReconnect(now: Instant) -> Instant {
        let retryAt = now + backoff.nextDelay()
        state = .waitingToReconnect(until: retryAt)
        return retryAt
    }
}
