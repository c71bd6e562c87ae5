import Synchronization
import Testing

@testable import Gateway

/// Wrong tokens per address: free at first, then waits that double up to a minute, forgotten after a while, bounded
/// in memory; and the feed refusing an attempt made too early without looking at its token.
@Suite("Web interface: wrong tokens slowed per address")
struct AuthThrottleTests {
    let start = ContinuousClock.now

    @Test("five wrong tokens are free; then 1, 2, 4 … 60 s after the last one; a right token clears the address")
    func waitsDouble() {
        var throttle = AuthThrottle()
        for attempt in 0..<5 {
            #expect(throttle.wait(for: "10.0.0.9", at: start) == nil, "attempt \(attempt)")
            throttle.failed("10.0.0.9", at: start)
        }
        #expect(throttle.wait(for: "10.0.0.9", at: start) == .seconds(1))
        #expect(throttle.wait(for: "10.0.0.9", at: start + .milliseconds(400)) == .milliseconds(600))
        #expect(throttle.wait(for: "10.0.0.9", at: start + .seconds(1)) == nil)
        #expect(throttle.wait(for: "10.0.0.8", at: start) == nil, "another address is not slowed")
        throttle.failed("10.0.0.9", at: start + .seconds(1))
        #expect(throttle.wait(for: "10.0.0.9", at: start + .seconds(1)) == .seconds(2))
        #expect((5...30).map(throttle.delay(afterFailures:)).map { $0.components.seconds }
                == [1, 2, 4, 8, 16, 32] + Array(repeating: 60, count: 20))
        throttle.succeeded("10.0.0.9")
        #expect(throttle.wait(for: "10.0.0.9", at: start + .seconds(1)) == nil)
        #expect(throttle.records.isEmpty)
    }

    @Test("an address is forgotten 15 minutes after its last wrong token; at most `capacity` addresses are kept")
    func forgetsAndStaysBounded() {
        var throttle = AuthThrottle(capacity: 3)
        for _ in 0..<6 { throttle.failed("a", at: start) }
        throttle.failed("b", at: start + .seconds(1))
        throttle.failed("c", at: start + .seconds(2))
        throttle.failed("d", at: start + .seconds(3))
        #expect(Set(throttle.records.keys) == ["b", "c", "d"], "the oldest failure went first")
        throttle.failed("e", at: start + .seconds(4 + 15 * 60))
        #expect(Set(throttle.records.keys) == ["e"], "b, c and d are forgotten after 15 minutes")
        for index in 0..<10_000 { throttle.failed("host-\(index)", at: start + .seconds(4000)) }
        #expect(throttle.records.count == 3)
    }

    @Test("the feed: after five wrong tokens the next attempt is refused with retry_after_s, even with the right token")
    func feedRefusesEarlyAttempts() throws {
        let clock = Mutex(start)
        let feed = BrowserFeed(greeting: .init(baseTopic: "wear2mqtt", gatewayID: "lab", version: "9.9"),
                               token: Secret("s3cret"), brokerConnected: { true }, now: { clock.withLock { $0 } })
        let refused = BrowserFeed.Action.close(code: 4401, reason: "a valid token is required")
        func attempt(_ token: String, from peer: String = "192.0.2.7") -> [BrowserFeed.Action] {
            let (id, _) = feed.open(peer: peer)
            return feed.receive(id, Array(#"{"type":"auth","token":"\#(token)"}"#.utf8))
        }
        for _ in 0..<5 { #expect(attempt("guess") == [.send(BrowserFrames.authFailed), refused]) }
        #expect(attempt("s3cret") == [.send(BrowserFrames.authThrottled(retryAfterSeconds: 1)), refused])
        #expect(attempt("s3cret", from: "192.0.2.8").count == 1, "another address signs in")
        clock.withLock { $0 += .seconds(1) }
        let reply = attempt("s3cret")
        #expect(reply.count == 1 && reply != [refused], "the right token, once the wait is over")
        #expect(attempt("guess") == [.send(BrowserFrames.authFailed), refused], "cleared: free again")
    }
}
