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
            if message != nil { flow.taken() }
            return message
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator(), flow: flow) }
}

/// How many received messages wait for the consumer, shared by the connection (which adds) and the consumer
/// (which takes). Reading pauses at `capacity` and resumes at half of it, so a busy gateway reads in batches
/// rather than one message per free slot.
final class IncomingFlow: Sendable {
    let capacity: Int
    private let pending = Atomic<Int>(0)

    init(capacity: Int) { self.capacity = max(1, capacity) }

    func added() { pending.add(1, ordering: .relaxed) }
    func taken() { pending.subtract(1, ordering: .relaxed) }

    var waiting: Int { pending.load(ordering: .relaxed) }
    var isFull: Bool { waiting >= capacity }
    var hasRoomAgain: Bool { waiting <= capacity / 2 }
}
