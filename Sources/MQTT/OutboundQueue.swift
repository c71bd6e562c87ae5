/// What waits to go to the broker, and in which order: the offline ring's messages first (what was published while
/// the link was down), then spooled durable records, at most `window` of them awaiting their PUBACK at a time so a
/// long outage's backlog does not fill libmosquitto's queue; and what a close waits for.
///
/// It holds the ring and the spool (which stay what they are) and the in-flight bookkeeping between them and
/// libmosquitto's message ids. It sends nothing itself: the connection publishes what it hands out and reports the
/// ids back. Loop thread only, like the spool.
struct OutboundQueue {
    /// A spooled record ready to publish: QoS at least 1, its expiry shortened by the time it waited.
    struct DurableMessage {
        let sequence: UInt64
        let message: OutgoingMessage
    }

    private(set) var ring: OfflineRing
    let spool: DurableSpool
    /// How many durable messages may await their PUBACK at once.
    let window: Int
    /// Durable messages handed to libmosquitto, by message id, awaiting PUBACK.
    private var inflight: [Int32: UInt64] = [:]
    /// Final messages of a close, awaiting PUBACK.
    private var finalMessageIDs = Set<Int32>()

    init(ring: OfflineRing, spool: DurableSpool, window: Int) {
        self.ring = ring
        self.spool = spool
        self.window = window
    }

    /// Keeps a message the link cannot take now (oldest dropped when the ring is full).
    mutating func holdOffline(_ message: OutgoingMessage) { ring.append(message) }

    /// The next held message, oldest first.
    mutating func nextOffline() -> OutgoingMessage? { ring.popFirst() }

    /// The next spooled record to publish, or nil while the window is full or nothing is unsent. Records whose
    /// message expiry passed while they waited are acknowledged and skipped: the broker would drop them anyway.
    mutating func nextDurable(nowMilliseconds: UInt64) throws(MQTTError) -> DurableMessage? {
        while inflight.count < window, spool.hasUnsent {
            guard let record = try spool.nextUnsent() else { return nil }
            var message = record.message
            message.qos = max(message.qos, .atLeastOnce)
            if let expiry = message.properties.messageExpiryInterval {
                let ageSeconds = (nowMilliseconds &- record.enqueuedAtMilliseconds) / 1000
                guard ageSeconds < expiry else {
                    spool.acknowledge(record.sequence)
                    continue
                }
                message.properties.messageExpiryInterval = expiry - UInt32(ageSeconds)
            }
            return DurableMessage(sequence: record.sequence, message: message)
        }
        return nil
    }

    /// What libmosquitto did with a durable message: its id to await, or nil when it refused it (then it is dropped
    /// from the spool, as retrying would be refused again).
    mutating func sent(_ durable: DurableMessage, messageID: Int32?) {
        if let messageID {
            inflight[messageID] = durable.sequence
        } else {
            spool.acknowledge(durable.sequence)
        }
    }

    /// A close's final message, awaited before the close ends.
    mutating func sentFinalMessage(messageID: Int32) { finalMessageIDs.insert(messageID) }

    /// libmosquitto finished a publish. Returns whether it was a durable message (now gone from the spool).
    mutating func completed(messageID: Int32) -> Bool {
        finalMessageIDs.remove(messageID)
        guard let sequence = inflight.removeValue(forKey: messageID) else { return false }
        spool.acknowledge(sequence)
        return true
    }

    /// Nothing held, unsent or awaiting a PUBACK (libmosquitto's own buffer is the connection's to ask).
    var isDrained: Bool { inflight.isEmpty && finalMessageIDs.isEmpty && !spool.hasUnsent && ring.isEmpty }

    /// Nothing to send, await or sync: the connection's tick may slow down.
    var isIdle: Bool { !spool.needsSync && !spool.hasUnsent && inflight.isEmpty && ring.isEmpty }
}
