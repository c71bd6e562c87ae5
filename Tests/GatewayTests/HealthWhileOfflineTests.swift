import MQTT
import Testing
import Wear2MQTTTesting

@testable import Gateway

/// Issue 24: after a broker outage the first `bridge/health` was a stale one from the offline queue.
@Suite("bridge/health and the broker link")
struct HealthWhileOfflineTests {
    @Test("no report is made while the broker is away; the next one, with the link up, is made at once")
    func noStaleReport() async throws {
        let harness = try GatewayHarness()
        let topic = "\(harness.core.topics.base)/bridge/health"
        await harness.core.publishHealth()
        #expect(harness.sink.messages(on: topic).count == 1)

        harness.sink.connected = false
        await harness.core.publishHealth()
        await harness.core.publishHealth()
        #expect(harness.sink.messages(on: topic).count == 1, "nothing queued to arrive stale")

        harness.sink.connected = true
        await harness.core.publishHealth()
        #expect(harness.sink.messages(on: topic).count == 2)
    }
}
