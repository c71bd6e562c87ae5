import DequeModule

/// What one browser is owed between two batches, bounded so a slow or frozen tab costs the gateway a fixed amount of
/// memory and never slows the data path (the socket's writer takes a batch only when the socket can take it).
///
/// Retained messages (states, availability, the bridge's records) are never dropped: a newer one for a topic still
/// waiting replaces the waiting one's payload in place, so they are bounded by the number of retained topics.
/// Everything else (samples, events, answers) is dropped on arrival while the queue is full, and counted.
public struct BrowserQueue: Sendable {
    public struct Entry: Sendable, Equatable {
        public var topic: String
        /// `{"topic":…,"payload":…,"retained":…}`, encoded once for every browser.
        public var encoded: [UInt8]
        public var retained: Bool

        public init(topic: String, encoded: [UInt8], retained: Bool) {
            self.topic = topic
            self.encoded = encoded
            self.retained = retained
        }
    }

    public let maximumBytes: Int
    public let maximumMessages: Int
    private var entries: Deque<Entry> = []
    /// Position of each retained topic's waiting entry, counted from the first entry ever queued.
    private var retainedPositions: [String: Int] = [:]
    /// How many entries were taken before `entries.first`: positions stay valid across takes.
    private var taken = 0
    public private(set) var bytes = 0
    /// Messages dropped since the queue was made.
    public private(set) var dropped = 0

    public init(maximumBytes: Int = 1 << 20, maximumMessages: Int = 8192) {
        self.maximumBytes = maximumBytes
        self.maximumMessages = maximumMessages
    }

    public var isEmpty: Bool { entries.isEmpty }
    public var count: Int { entries.count }

    /// Queues `entry`; false when it was dropped.
    @discardableResult
    public mutating func enqueue(_ entry: Entry) -> Bool {
        if entry.retained, let position = retainedPositions[entry.topic] {
            let index = position - taken
            bytes += entry.encoded.count - entries[index].encoded.count
            entries[index] = entry
            return true
        }
        if !entry.retained, entries.count >= maximumMessages || bytes + entry.encoded.count > maximumBytes {
            dropped += 1
            return false
        }
        if entry.retained { retainedPositions[entry.topic] = taken + entries.count }
        entries.append(entry)
        bytes += entry.encoded.count
        return true
    }

    /// Everything waiting, oldest first, at most `limit` bytes' worth (always at least one entry).
    public mutating func take(upToBytes limit: Int = .max) -> [Entry] {
        var batch: [Entry] = []
        var size = 0
        while let first = entries.first, batch.isEmpty || size + first.encoded.count <= limit {
            entries.removeFirst()
            if first.retained { retainedPositions[first.topic] = nil }
            taken += 1
            size += first.encoded.count
            bytes -= first.encoded.count
            batch.append(first)
        }
        return batch
    }
}
