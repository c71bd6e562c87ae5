import Testing

@testable import Gateway

@Suite("Browser queue: bounded, retained messages coalesced, drops counted")
struct BrowserQueueTests {
    func entry(_ topic: String, _ text: String = "x", retained: Bool = false) -> BrowserQueue.Entry {
        BrowserQueue.Entry(topic: topic, encoded: Array(text.utf8), retained: retained)
    }

    @Test("messages beyond the count are dropped on arrival and counted; the oldest stay in order")
    func countBound() {
        var queue = BrowserQueue(maximumBytes: 1 << 20, maximumMessages: 3)
        for index in 0..<5 { queue.enqueue(entry("s/\(index)")) }
        #expect(queue.dropped == 2)
        let batch1 = queue.take()
        #expect(batch1.map(\.topic) == ["s/0", "s/1", "s/2"])
        let taken2 = queue.enqueue(entry("s/5"))
        #expect(taken2)
        let batch3 = queue.take()
        #expect(batch3.map(\.topic) == ["s/5"])
    }

    @Test("the byte bound holds: a message that would pass it is dropped")
    func byteBound() {
        var queue = BrowserQueue(maximumBytes: 10, maximumMessages: 100)
        let taken4 = queue.enqueue(entry("a", "12345678"))
        #expect(taken4)
        let taken5 = queue.enqueue(entry("b", "123"))
        #expect(!taken5)
        #expect(queue.bytes == 8)
        #expect(queue.dropped == 1)
    }

    @Test("a retained message is never dropped; a newer one for a waiting topic replaces it in place")
    func retainedCoalesce() {
        var queue = BrowserQueue(maximumBytes: 4, maximumMessages: 1)
        queue.enqueue(entry("s/1", "1"))
        queue.enqueue(entry("state", "old", retained: true))
        queue.enqueue(entry("s/2", "2"))
        queue.enqueue(entry("state", "newer", retained: true))
        #expect(queue.dropped == 1)
        let batch6 = queue.take()
        #expect(batch6.map(\.topic) == ["s/1", "state"])
        #expect(batch6.last?.encoded == Array("newer".utf8))
        #expect(queue.bytes == 0)
        // Taken: the next one for the topic is queued anew.
        queue.enqueue(entry("state", "again", retained: true))
        let batch7 = queue.take()
        #expect(batch7.map(\.encoded) == [Array("again".utf8)])
    }

    @Test("take stops at the byte limit, but always takes one")
    func takeLimit() {
        var queue = BrowserQueue()
        for index in 0..<4 { queue.enqueue(entry("s/\(index)", "0123456789")) }
        let batch8 = queue.take(upToBytes: 25)
        #expect(batch8.count == 2)
        let batch9 = queue.take(upToBytes: 1)
        #expect(batch9.count == 1)
        let batch10 = queue.take()
        #expect(batch10.count == 1)
        #expect(queue.isEmpty)
    }

    @Test("retained positions survive takes in between")
    func positionsAfterTakes() {
        var queue = BrowserQueue()
        queue.enqueue(entry("a"))
        queue.enqueue(entry("b"))
        _ = queue.take(upToBytes: 1)
        queue.enqueue(entry("state", "1", retained: true))
        queue.enqueue(entry("c"))
        queue.enqueue(entry("state", "2", retained: true))
        let batch11 = queue.take()
        #expect(batch11.map { String(decoding: $0.encoded, as: UTF8.self) } == ["x", "2", "x"])
    }
}
