import MQTT
import Testing

/// A deterministic generator so the jitter bounds can be checked exactly.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct ReconnectBackoffTests {
    @Test func growsExponentiallyWithinJitterBoundsAndCapsAtTheMaximum() {
        var backoff = ReconnectBackoff(minimumDelay: .milliseconds(100), maximumDelay: .seconds(2))
        var random = SplitMix(state: 7)
        let ceilings: [Duration] = [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800),
                                    .milliseconds(1600), .seconds(2), .seconds(2), .seconds(2)]
        for ceiling in ceilings {
            let delay = backoff.nextDelay(using: &random)
            #expect(delay <= ceiling)
            #expect(delay >= ceiling / 2)
        }
    }

    @Test func jitterSpreadsGatewaysApart() {
        var first = ReconnectBackoff(minimumDelay: .seconds(1), maximumDelay: .seconds(60))
        var second = first
        var randomA = SplitMix(state: 1), randomB = SplitMix(state: 2)
        let a = (0..<5).map { _ in first.nextDelay(using: &randomA) }
        let b = (0..<5).map { _ in second.nextDelay(using: &randomB) }
        #expect(a != b)
    }

    @Test func resetStartsAgainFromTheMinimum() {
        var backoff = ReconnectBackoff(minimumDelay: .milliseconds(100), maximumDelay: .seconds(10))
        var random = SplitMix(state: 3)
        for _ in 0..<6 { _ = backoff.nextDelay(using: &random) }
        backoff.reset()
        #expect(backoff.nextDelay(using: &random) <= .milliseconds(100))
    }
}

@Suite struct OfflineRingTests {
    @Test func dropsTheOldestAndCountsIt() {
        var ring = OfflineRing(capacity: 3)
        for index in 1...5 { ring.append(OutgoingMessage(topic: "t", text: "\(index)")) }
        #expect(ring.dropped == 2)
        var texts: [String] = []
        while let message = ring.popFirst() { texts.append(String(decoding: message.payload, as: UTF8.self)) }
        #expect(texts == ["3", "4", "5"])
    }
}

@Suite struct TopicValidationTests {
    @Test func publishTopicsMustNotContainWildcards() {
        #expect(TopicValidation.isValidPublishTopic("wear2mqtt/bridge/state"))
        #expect(!TopicValidation.isValidPublishTopic("a/+/b"))
        #expect(!TopicValidation.isValidPublishTopic("a/#"))
        #expect(!TopicValidation.isValidPublishTopic(""))
    }

    @Test func filtersFollowTheWildcardRules() {
        #expect(TopicValidation.isValidFilter("wear2mqtt/+/request/#"))
        #expect(!TopicValidation.isValidFilter("a/#/b"))
        #expect(!TopicValidation.isValidFilter("a/b+"))
    }
}
