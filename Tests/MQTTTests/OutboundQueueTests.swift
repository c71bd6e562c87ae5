@testable import MQTT
import Testing
import Wear2MQTTTesting

/// The order and the window in which waiting messages go to the broker, without a broker: the test plays
/// libmosquitto, handing out message ids and PUBACKs.
@Suite struct OutboundQueueTests {
    func queue(in directory: TemporaryDirectory, window: Int = 2) throws -> OutboundQueue {
        OutboundQueue(ring: OfflineRing(capacity: 4), spool: try DurableSpool(directory: directory.path, maximumBytes: 1 << 20),
                      window: window)
    }

    @Test("the ring's messages come oldest first; spooled records at most `window` unacknowledged at a time, QoS at least 1")
    func windowBoundsTheDurableMessagesInFlight() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var outbound = try queue(in: directory)
        outbound.holdOffline(OutgoingMessage(topic: "live/1", text: "{}"))
        outbound.holdOffline(OutgoingMessage(topic: "live/2", text: "{}"))
        for index in 1...3 { try outbound.spool.append(OutgoingMessage(topic: "durable/\(index)", text: "{}"), enqueuedAtMilliseconds: 0) }
        #expect(outbound.nextOffline()?.topic == "live/1")
        #expect(outbound.nextOffline()?.topic == "live/2")
        #expect(outbound.nextOffline() == nil)

        let first = try #require(try outbound.nextDurable(nowMilliseconds: 0))
        #expect(first.message.topic == "durable/1")
        #expect(first.message.qos == .atLeastOnce)
        outbound.sent(first, messageID: 11)
        outbound.sent(try #require(try outbound.nextDurable(nowMilliseconds: 0)), messageID: 12)
        #expect(try outbound.nextDurable(nowMilliseconds: 0) == nil, "two await their PUBACK")
        #expect(!outbound.isDrained)

        let wasDurable = outbound.completed(messageID: 11)
        #expect(wasDurable)
        #expect(outbound.spool.pendingCount == 2)
        #expect(try outbound.nextDurable(nowMilliseconds: 0)?.message.topic == "durable/3")
    }

    @Test("a record refused by libmosquitto is dropped from the spool; a PUBACK for no durable message is not one")
    func refusedRecordsAreDropped() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var outbound = try queue(in: directory)
        try outbound.spool.append(OutgoingMessage(topic: "durable/1", text: "{}"), enqueuedAtMilliseconds: 0)
        outbound.sent(try #require(try outbound.nextDurable(nowMilliseconds: 0)), messageID: nil)
        #expect(outbound.spool.pendingCount == 0)
        let unknownWasDurable = outbound.completed(messageID: 5)
        #expect(!unknownWasDurable)
        #expect(outbound.isDrained)
    }

    @Test("a record's expiry is shortened by its wait, and one that expired while waiting is skipped")
    func expiryCountsTheWait() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var outbound = try queue(in: directory)
        let expiring = MQTTProperties(messageExpiryInterval: 10)
        try outbound.spool.append(OutgoingMessage(topic: "durable/old", text: "{}", properties: expiring), enqueuedAtMilliseconds: 0)
        try outbound.spool.append(OutgoingMessage(topic: "durable/new", text: "{}", properties: expiring), enqueuedAtMilliseconds: 6_000)
        let next = try #require(try outbound.nextDurable(nowMilliseconds: 10_500))
        #expect(next.message.topic == "durable/new")
        #expect(next.message.properties.messageExpiryInterval == 6)
        #expect(outbound.spool.pendingCount == 1, "the expired one is acknowledged")
    }

    @Test("a close's final message keeps the queue undrained until its PUBACK")
    func finalMessagesAreAwaited() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var outbound = try queue(in: directory)
        outbound.sentFinalMessage(messageID: 3)
        #expect(!outbound.isDrained)
        let finalWasDurable = outbound.completed(messageID: 3)
        #expect(!finalWasDurable)
        #expect(outbound.isDrained)
    }
}
