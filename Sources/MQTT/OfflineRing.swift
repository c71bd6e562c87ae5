import DequeModule

/// Where non-durable messages wait while the broker is away: a bounded FIFO that drops the oldest message
/// when full and counts what it dropped, so `bridge/health` can report the loss instead of hiding it.
public struct OfflineRing: Sendable {
    public let capacity: Int
    public private(set) var dropped: UInt64 = 0
    private var messages: Deque<OutgoingMessage> = []

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    public var count: Int { messages.count }
    public var isEmpty: Bool { messages.isEmpty }

    public mutating func append(_ message: OutgoingMessage) {
        if messages.count == capacity {
            messages.removeFirst()
            dropped += 1
        }
        messages.append(message)
    }

    public mutating func popFirst() -> OutgoingMessage? { messages.popFirst() }
}
