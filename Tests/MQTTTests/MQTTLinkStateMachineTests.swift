@testable import MQTT
import Testing

/// The link's state machine, transition by transition: each state against the events that can reach it. Time is
/// a value moved by hand from `start`; nothing sleeps, nothing connects.
@Suite struct MQTTLinkStateMachineTests {
    typealias Machine = MQTTLinkStateMachine
    let start = ContinuousClock.now

    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int64(seconds * 1000)) }

    /// Backoff 1 s doubling to 8 s, connect timeout 10 s.
    func idle(credentialsAcceptedBefore: Bool = false) -> Machine {
        Machine(backoff: ReconnectBackoff(minimumDelay: .seconds(1), maximumDelay: .seconds(8)),
                connectTimeout: .seconds(10), credentialsAcceptedBefore: credentialsAcceptedBefore)
    }

    func opening(credentialsAcceptedBefore: Bool = false) -> Machine {
        var machine = idle(credentialsAcceptedBefore: credentialsAcceptedBefore)
        #expect(machine.tick(now: start, drained: true) == .connect)
        return machine
    }

    func awaitingConnack(credentialsAcceptedBefore: Bool = false) -> Machine {
        var machine = opening(credentialsAcceptedBefore: credentialsAcceptedBefore)
        #expect(machine.socketOpened() == .none)
        return machine
    }

    func connected() -> Machine {
        var machine = awaitingConnack()
        #expect(machine.connackAccepted() == .reportConnected)
        return machine
    }

    func closingUp(deadline: Double = 4) -> Machine {
        var machine = connected()
        #expect(machine.close(deadline: at(deadline)) == .sendFinalMessages)
        return machine
    }

    /// The delay a report asks for, from `now`.
    func delay(_ action: Machine.Action, from now: ContinuousClock.Instant) -> Duration? {
        switch action {
        case .reportLost(let retryAt?), .reportUnreachable(let retryAt?): retryAt - now
        default: nil
        }
    }

    // MARK: idle

    @Test("idle: the first tick connects at once")
    func idleTickConnects() {
        var machine = idle()
        #expect(machine.tick(now: start, drained: true) == .connect)
        #expect(machine.state == .connecting(since: start, .opening))
        #expect(machine.isAttemptInFlight)
    }

    @Test("idle: a close before any attempt ends at the next tick without connecting or disconnecting")
    func idleClose() {
        var machine = idle()
        #expect(machine.close(deadline: at(4)) == .none)
        #expect(machine.state == .closing(deadline: at(4), link: .down))
        #expect(machine.tick(now: start, drained: false) == .finishClosed(disconnect: false))
        #expect(machine.isFinished)
    }

    @Test("idle: a loss or a CONNACK before any attempt changes nothing")
    func idleIgnoresLinkEvents() {
        var machine = idle()
        #expect(machine.linkLost(now: start) == .none)
        #expect(machine.connackAccepted() == .none)
        #expect(machine.socketOpened() == .none)
        #expect(machine.state == .idle)
    }

    // MARK: connecting, the helper thread's connect under way

    @Test("opening: the tick waits for the helper thread however long it takes (no timeout, no second attempt)")
    func openingTickWaits() {
        var machine = opening()
        #expect(machine.tick(now: at(60), drained: true) == .none)
        #expect(machine.state == .connecting(since: start, .opening))
    }

    @Test("opening: the connect returned, the CONNACK is awaited and the loop may use the handle")
    func openingSocketOpened() {
        var machine = opening()
        #expect(machine.socketOpened() == .none)
        #expect(machine.state == .connecting(since: start, .awaitingConnack))
        #expect(!machine.isAttemptInFlight)
        #expect(!machine.isConnected)
    }

    @Test("opening: a failed connect (broker away) waits the backoff's first delay, and is not reported lost")
    func openingConnectFailed() throws {
        var machine = opening()
        let action = machine.connectFailed(now: at(1), tlsFailure: nil)
        guard case .reportUnreachable(let retryAt?) = action else { Issue.record("\(action)"); return }
        #expect(retryAt - at(1) >= .milliseconds(500) && retryAt - at(1) <= .seconds(1))
        #expect(machine.state == .waitingToReconnect(until: retryAt))
    }

    @Test("opening: a TLS failure before any success is fatal and ends at the next tick, once")
    func openingTLSFailureIsFatal() {
        var machine = opening()
        #expect(machine.connectFailed(now: at(1), tlsFailure: "certificate verify failed") == .none)
        #expect(machine.state == .failed(.tlsFailure("certificate verify failed")))
        #expect(machine.tick(now: at(1), drained: true) == .finishFailed(.tlsFailure("certificate verify failed")))
        #expect(machine.isFinished)
        #expect(machine.tick(now: at(100), drained: true) == .none)
    }

    @Test("opening: a TLS failure after a success this run is retried (a certificate being renewed)")
    func openingTLSFailureAfterSuccessIsRetried() {
        var machine = connected()
        _ = machine.linkLost(now: at(1))
        guard case .waitingToReconnect(let until) = machine.state else { Issue.record("\(machine.state)"); return }
        #expect(machine.tick(now: until, drained: true) == .connect)
        let action = machine.connectFailed(now: until, tlsFailure: "certificate verify failed")
        guard case .reportUnreachable(.some) = action else { Issue.record("\(action)"); return }
    }

    @Test("opening: a loss reported while the helper thread holds the handle is left to its return")
    func openingIgnoresLinkLost() {
        var machine = opening()
        #expect(machine.linkLost(now: at(1)) == .none)
        #expect(machine.state == .connecting(since: start, .opening))
    }

    @Test("opening: a close waits for the attempt to return, whatever the deadline")
    func openingClose() {
        var machine = opening()
        #expect(machine.close(deadline: at(4)) == .none)
        #expect(machine.state == .closing(deadline: at(4), link: .attemptInFlight))
        #expect(machine.isAttemptInFlight)
        #expect(machine.tick(now: at(30), drained: true) == .none)
    }

    // MARK: connecting, CONNACK awaited

    @Test("awaiting CONNACK: the tick abandons the attempt only after the connect timeout")
    func awaitingConnackTimeout() {
        var machine = awaitingConnack()
        #expect(machine.tick(now: at(10), drained: true) == .none)
        #expect(machine.tick(now: at(10.5), drained: true) == .abandonAttempt)
        // Abandoning shuts the socket; its loss is what moves the state.
        #expect(machine.state == .connecting(since: start, .awaitingConnack))
        guard case .reportUnreachable(.some) = machine.linkLost(now: at(10.5)) else { Issue.record(); return }
        guard case .waitingToReconnect = machine.state else { Issue.record("\(machine.state)"); return }
    }

    @Test("awaiting CONNACK: accepted, the link is up and reported")
    func awaitingConnackAccepted() {
        var machine = awaitingConnack()
        #expect(machine.connackAccepted() == .reportConnected)
        #expect(machine.state == .connected)
        #expect(machine.isConnected)
        #expect(machine.hasConnected)
    }

    @Test("awaiting CONNACK: credentials never accepted are refused for good: no retry")
    func refusedCredentialsAreFatal() {
        var machine = awaitingConnack()
        #expect(machine.connackRefused(credentials: "not authorised") == .none)
        #expect(machine.state == .failed(.authenticationRefused(reason: "not authorised")))
        // libmosquitto's disconnect follows the CONNACK: it does not turn the failure into a retry.
        #expect(machine.linkLost(now: at(1)) == .none)
        #expect(machine.tick(now: at(1), drained: true) == .finishFailed(.authenticationRefused(reason: "not authorised")))
        #expect(machine.tick(now: at(120), drained: true) == .none)
        #expect(machine.isFinished)
    }

    @Test("awaiting CONNACK: credentials accepted in an earlier run are retried when refused")
    func refusedCredentialsAcceptedBeforeAreRetried() {
        var machine = awaitingConnack(credentialsAcceptedBefore: true)
        #expect(machine.connackRefused(credentials: "not authorised") == .warnCredentialsRefused)
        #expect(machine.state == .connecting(since: start, .awaitingConnack))
        guard case .reportUnreachable(.some) = machine.linkLost(now: at(1)) else { Issue.record(); return }
    }

    @Test("awaiting CONNACK: credentials accepted earlier this run are retried when refused")
    func refusedCredentialsAfterASuccessAreRetried() {
        var machine = connected()
        _ = machine.linkLost(now: at(1))
        guard case .waitingToReconnect(let until) = machine.state else { Issue.record(); return }
        _ = machine.tick(now: until, drained: true)
        _ = machine.socketOpened()
        #expect(machine.connackRefused(credentials: "bad user name or password") == .warnCredentialsRefused)
    }

    @Test("awaiting CONNACK: a refusal for another reason (server unavailable) waits for the disconnect")
    func refusedForAnotherReason() {
        var machine = awaitingConnack()
        #expect(machine.connackRefused(credentials: nil) == .none)
        #expect(machine.state == .connecting(since: start, .awaitingConnack))
    }

    @Test("awaiting CONNACK: a TLS failure seen on the socket before any success is fatal")
    func awaitingConnackTLSFailure() {
        var machine = awaitingConnack()
        #expect(machine.tlsFailureSeen("SSL routines::tlsv1 alert unknown ca") == .none)
        #expect(machine.state == .failed(.tlsFailure("SSL routines::tlsv1 alert unknown ca")))
    }

    @Test("awaiting CONNACK: a close drops the attempt at the next tick, with no DISCONNECT")
    func awaitingConnackClose() {
        var machine = awaitingConnack()
        #expect(machine.close(deadline: at(4)) == .none)
        #expect(machine.state == .closing(deadline: at(4), link: .down))
        #expect(machine.tick(now: start, drained: false) == .finishClosed(disconnect: false))
    }

    // MARK: connected

    @Test("connected: a stale reconnect time passing does nothing")
    func connectedTickDoesNothing() {
        var machine = connected()
        #expect(machine.tick(now: at(3600), drained: false) == .none)
        #expect(machine.state == .connected)
    }

    @Test("connected: the loss is reported and a reconnect waits the backoff")
    func connectedLinkLost() {
        var machine = connected()
        let action = machine.linkLost(now: at(5))
        guard case .reportLost(let retryAt?) = action else { Issue.record("\(action)"); return }
        #expect(machine.state == .waitingToReconnect(until: retryAt))
        #expect(!machine.isConnected)
    }

    @Test("connected: a clean disconnect we did not ask for (the broker's) is a loss like any other")
    func connectedCleanDisconnectIsALoss() {
        var machine = connected()
        guard case .reportLost(.some) = machine.linkLost(now: at(5), cleanly: true) else { Issue.record(); return }
    }

    @Test("connected: a close sends its final messages and drains")
    func connectedClose() {
        var machine = connected()
        #expect(machine.close(deadline: at(4)) == .sendFinalMessages)
        #expect(machine.state == .closing(deadline: at(4), link: .up))
        #expect(machine.isConnected)
    }

    @Test("connected: a TLS alert or a second CONNACK changes nothing")
    func connectedIgnoresAttemptEvents() {
        var machine = connected()
        #expect(machine.tlsFailureSeen("SSL routines") == .none)
        #expect(machine.connackAccepted() == .none)
        #expect(machine.connackRefused(credentials: "not authorised") == .none)
        #expect(machine.connectFailed(now: at(1), tlsFailure: nil) == .none)
        #expect(machine.state == .connected)
    }

    // MARK: waiting to reconnect

    @Test("waiting: the tick connects from the instant on, not before")
    func waitingTick() {
        var machine = opening()
        guard case .reportUnreachable(let retryAt?) = machine.connectFailed(now: at(1), tlsFailure: nil) else {
            Issue.record(); return
        }
        #expect(machine.tick(now: retryAt - .milliseconds(1), drained: true) == .none)
        #expect(machine.tick(now: retryAt, drained: true) == .connect)
        #expect(machine.state == .connecting(since: retryAt, .opening))
    }

    @Test("waiting: a second loss (the socket closing after the disconnect callback) counts nothing")
    func waitingIgnoresLinkLost() {
        var machine = connected()
        _ = machine.linkLost(now: at(1))
        let before = machine
        #expect(machine.linkLost(now: at(1)) == .none)
        #expect(machine == before)
    }

    @Test("waiting: a late CONNACK of an abandoned attempt is ignored")
    func waitingIgnoresLateConnack() {
        var machine = awaitingConnack()
        _ = machine.linkLost(now: at(11))
        let before = machine
        #expect(machine.connackAccepted() == .none)
        #expect(machine == before)
    }

    @Test("waiting: a close ends at the next tick without another attempt")
    func waitingClose() {
        var machine = connected()
        _ = machine.linkLost(now: at(1))
        #expect(machine.close(deadline: at(4)) == .none)
        #expect(machine.tick(now: at(100), drained: false) == .finishClosed(disconnect: false))
    }

    // MARK: closing, link up

    @Test("closing up: waits while undrained, ends with DISCONNECT once drained")
    func closingUpEndsWhenDrained() {
        var machine = closingUp()
        #expect(machine.tick(now: at(1), drained: false) == .none)
        #expect(machine.tick(now: at(1), drained: true) == .finishClosed(disconnect: true))
        #expect(machine.isFinished)
    }

    @Test("closing up: ends with DISCONNECT at the deadline, drained or not")
    func closingUpEndsAtTheDeadline() {
        var machine = closingUp(deadline: 4)
        #expect(machine.tick(now: at(3.9), drained: false) == .none)
        #expect(machine.tick(now: at(4), drained: false) == .finishClosed(disconnect: true))
    }

    @Test("closing up: a loss is reported, no retry is planned, and the close ends without DISCONNECT")
    func closingUpLinkLost() {
        var machine = closingUp()
        #expect(machine.linkLost(now: at(1)) == .reportLost(retryAt: nil))
        #expect(machine.state == .closing(deadline: at(4), link: .down))
        #expect(machine.tick(now: at(1), drained: false) == .finishClosed(disconnect: false))
    }

    @Test("closing up: our own clean DISCONNECT is not reported")
    func closingUpCleanDisconnect() {
        var machine = closingUp()
        #expect(machine.linkLost(now: at(1), cleanly: true) == .none)
        #expect(machine.state == .closing(deadline: at(4), link: .down))
    }

    @Test("closing up: a second close moves the deadline and sends its own final messages")
    func closingUpSecondClose() {
        var machine = closingUp(deadline: 4)
        #expect(machine.close(deadline: at(1)) == .sendFinalMessages)
        #expect(machine.tick(now: at(1), drained: false) == .finishClosed(disconnect: true))
    }

    @Test("only a close on an up link asks whether it has drained")
    func drainedIsAskedOnlyWhileClosingUp() {
        var asked = 0
        var machine = connected()
        _ = machine.tick(now: at(1), drained: { asked += 1; return true }())
        #expect(asked == 0)
        _ = machine.close(deadline: at(4))
        _ = machine.tick(now: at(1), drained: { asked += 1; return false }())
        #expect(asked == 1)
    }

    // MARK: closing, attempt in flight

    @Test("closing in flight: a connect that succeeds after the close is dropped at the next tick")
    func connectSucceedingAfterClose() {
        var machine = opening()
        _ = machine.close(deadline: at(4))
        #expect(machine.socketOpened() == .none)
        #expect(machine.state == .closing(deadline: at(4), link: .down))
        #expect(!machine.isAttemptInFlight)
        // Its CONNACK, had it come, does not bring the link up.
        #expect(machine.connackAccepted() == .none)
        #expect(machine.tick(now: at(1), drained: false) == .finishClosed(disconnect: false))
    }

    @Test("closing in flight: a connect that fails after the close is reported without a retry")
    func connectFailingAfterClose() {
        var machine = opening()
        _ = machine.close(deadline: at(4))
        #expect(machine.connectFailed(now: at(1), tlsFailure: nil) == .reportUnreachable(retryAt: nil))
        #expect(machine.tick(now: at(1), drained: false) == .finishClosed(disconnect: false))
    }

    @Test("closing in flight: a TLS failure on the first attempt still ends with the error")
    func tlsFailureAfterCloseIsFatal() {
        var machine = opening()
        _ = machine.close(deadline: at(4))
        #expect(machine.connectFailed(now: at(1), tlsFailure: "SSL routines") == .none)
        #expect(machine.tick(now: at(1), drained: false) == .finishFailed(.tlsFailure("SSL routines")))
    }

    // MARK: failed and finished

    @Test("failed: a close neither stops nor delays the fatal end")
    func failedIgnoresClose() {
        var machine = awaitingConnack()
        _ = machine.connackRefused(credentials: "not authorised")
        #expect(machine.close(deadline: at(4)) == .none)
        #expect(machine.tick(now: at(1), drained: false) == .finishFailed(.authenticationRefused(reason: "not authorised")))
    }

    @Test("finished: nothing brings it back")
    func finishedIgnoresEverything() {
        var machine = closingUp()
        _ = machine.tick(now: at(1), drained: true)
        let before = machine
        #expect(machine.tick(now: at(100), drained: true) == .none)
        #expect(machine.close(deadline: at(200)) == .none)
        #expect(machine.socketOpened() == .none)
        #expect(machine.connectFailed(now: at(1), tlsFailure: "SSL routines") == .none)
        #expect(machine.tlsFailureSeen("SSL routines") == .none)
        #expect(machine.connackAccepted() == .none)
        #expect(machine.connackRefused(credentials: "not authorised") == .none)
        #expect(machine.linkLost(now: at(1)) == .none)
        #expect(machine == before)
    }

    // MARK: backoff

    @Test("failed attempts wait longer each time (1, 2, 4, 8, 8 s ceilings) and a success starts again from 1 s")
    func backoffGrowsAndResets() throws {
        var machine = idle()
        var now = start
        let ceilings: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8)]
        for ceiling in ceilings {
            #expect(machine.tick(now: now, drained: true) == .connect)
            let waited = try #require(delay(machine.connectFailed(now: now, tlsFailure: nil), from: now))
            #expect(waited >= ceiling / 2 && waited <= ceiling)
            now = now + waited
        }
        #expect(machine.tick(now: now, drained: true) == .connect)
        _ = machine.socketOpened()
        _ = machine.connackAccepted()
        #expect(machine.backoff.failedAttempts == 0)
        let waited = try #require(delay(machine.linkLost(now: now), from: now))
        #expect(waited >= .milliseconds(500) && waited <= .seconds(1))
    }

    @Test("a reconnect time that passes after a new connection is up does not start another attempt")
    func staleReconnectAfterANewConnection() throws {
        var machine = connected()
        guard case .reportLost(let retryAt?) = machine.linkLost(now: at(1)) else { Issue.record(); return }
        #expect(machine.tick(now: retryAt, drained: true) == .connect)
        _ = machine.socketOpened()
        #expect(machine.connackAccepted() == .reportConnected)
        // The old instant, and any later one, finds the link up.
        #expect(machine.tick(now: retryAt, drained: true) == .none)
        #expect(machine.tick(now: retryAt + .seconds(60), drained: true) == .none)
        #expect(machine.state == .connected)
    }
}
