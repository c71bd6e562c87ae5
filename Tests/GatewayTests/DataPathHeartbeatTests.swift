import EventLoop
import Testing

@testable import Gateway

/// The beat behind `GET /health`: stalled before the first beat and once beats stop, beating in between; and on a
/// real loop, the loop's own timer keeps it beating.
@Suite("Data-path heartbeat")
struct DataPathHeartbeatTests {
    @Test("no beat yet is not healthy; a beat is, until stalledAfter passes without another")
    func stalls() {
        let origin = ContinuousClock.now
        let heartbeat = DataPathHeartbeat(interval: .seconds(2), stalledAfter: .seconds(10), origin: origin)
        #expect(!heartbeat.isBeating(at: origin + .seconds(1)))
        heartbeat.beat(at: origin)
        #expect(heartbeat.isBeating(at: origin + .seconds(10)))
        #expect(!heartbeat.isBeating(at: origin + .seconds(10) + .milliseconds(1)))
        heartbeat.beat(at: origin + .seconds(30))
        #expect(heartbeat.isBeating(at: origin + .seconds(31)))
    }

    @Test("started on a loop, the loop's timer beats; a loop that ends stops it")
    func onALoop() async throws {
        let loop = try EventLoop(name: "heartbeat-test")
        loop.start()
        let heartbeat = DataPathHeartbeat(interval: .milliseconds(20), stalledAfter: .milliseconds(200))
        heartbeat.start(on: loop)
        let beating = await poll { heartbeat.isBeating() }
        #expect(beating)
        loop.stop()
        let stalled = await poll { !heartbeat.isBeating() }
        #expect(stalled)
    }

    /// True as soon as `condition` holds, false after 30 s without.
    func poll(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<3000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}
