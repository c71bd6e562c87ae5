import Synchronization

/// The messages from the broker, as `MQTTClient.messages` hands them out, with the count of those not yet taken:
/// the connection stops reading its socket while that count is at the buffer's capacity, so a flood of requests
/// waits in TCP and at the broker instead of being dropped (issue 24).
public struct IncomingMessages: AsyncSequence, Sendable {
    public typealias Element = IncomingMessage

    let stream: AsyncStream<IncomingMessage>
    let flow: IncomingFlow

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<IncomingMessage>.AsyncIterator
        let flow: IncomingFlow

        public mutating func next() async -> IncomingMessage? {
            let message = await base.next()
            if let message { flow.taken(bytes: message.bufferedBytes) }
            return message
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator(), flow: flow) }
}

/// How many received messages, and how many bytes of them, wait for the consumer, shared by the connection (which
/// adds) and the consumer (which takes). Reading pauses at either capacity and resumes at half of both, so a busy
/// gateway reads in batches rather than one message per free slot; beyond twice the byte capacity a message is
/// dropped (`hasRoom(for:)`), so a storm of large messages is bounded in memory, not only in count.
final class IncomingFlow: Sendable {
    let capacity: Int
    let byteCapacity: Int
    private let pending = Atomic<Int>(0)
    private let pendingBytes = Atomic<Int>(0)

    init(capacity: Int, byteCapacity: Int = .max / 4) {
        self.capacity = max(1, capacity)
        self.byteCapacity = max(1, byteCapacity)
    }

    func added(bytes: Int) {
        pending.add(1, ordering: .relaxed)
        pendingBytes.add(bytes, ordering: .relaxed)
    }

    func taken(bytes: Int) {
        pending.subtract(1, ordering: .relaxed)
        pendingBytes.subtract(bytes, ordering: .relaxed)
    }

    var waiting: Int { pending.load(ordering: .relaxed) }
    var waitingBytes: Int { pendingBytes.load(ordering: .relaxed) }
    var isFull: Bool { waiting >= capacity || waitingBytes >= byteCapacity }
    var hasRoomAgain: Bool { waiting <= capacity / 2 && waitingBytes <= byteCapacity / 2 }
    /// Whether a message of `bytes` may still be buffered: within twice the byte capacity and 16 times the count
    /// capacity (what a read past a pause may bring in, each message's own overhead bounded too).
    func hasRoom(for bytes: Int) -> Bool { waitingBytes + bytes <= 2 * byteCapacity && waiting < 16 * capacity }
}
