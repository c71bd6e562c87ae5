import MQTT
import Testing

@testable import Gateway

/// Issue 24: after a broker outage of any length, the gateway is back within a second of the broker's return.
@Suite("Reconnecting by default")
struct ReconnectDefaultsTests {
    struct Counter: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            return state ^ (state >> 29)
        }
    }

    @Test("every wait of an hour's outage is at most 1 s and at least a quarter second, whatever the jitter")
    func waitsStayUnderASecond() {
        var backoff = Configuration().mqttClientConfiguration().reconnect
        var random = Counter(state: 11)
        var waited = Duration.zero
        while waited < .seconds(3600) {
            let delay = backoff.nextDelay(using: &random)
            #expect(delay <= .seconds(1) && delay >= .milliseconds(250), "\(delay) after \(waited)")
            waited += delay
        }
    }
}
