import BlueZ

/// The requests to a proxy waiting for their answer, by what the answer names (the API has no request ids: an answer
/// is matched by device address, handle and kind, as aioesphomeapi matches them). Each waiter is resumed exactly once:
/// by its answer, an error for the same attribute, the link or the proxy going away, or its timeout.
struct ProxyWaiters: Sendable {
    enum Key: Hashable, Sendable {
        case connect(UInt64)
        case disconnect(UInt64)
        case services(UInt64)
        case pair(UInt64)
        case read(UInt64, UInt32)
        case write(UInt64, UInt32)
        case notify(UInt64, UInt32)
        /// A connect waiting for the proxy to report a free slot (it reports after every connection change).
        case freeSlot(UInt64)

        var address: UInt64 {
            switch self {
            case .connect(let a), .disconnect(let a), .services(let a), .pair(let a), .read(let a, _), .write(let a, _), .notify(let a, _), .freeSlot(let a): a
            }
        }

        var handle: UInt32? {
            switch self {
            case .read(_, let h), .write(_, let h), .notify(_, let h): h
            default: nil
            }
        }
    }

    enum Answer: Sendable {
        case bytes([UInt8])
        case connected(mtu: Int)
        case services([BluetoothGATTService])
        case done
        case failure(BlueZError)
    }

    private var waiting: [Key: CheckedContinuation<Answer, Never>] = [:]

    /// False when a request with the same key is already waiting (the caller refuses the second as InProgress).
    mutating func add(_ key: Key, _ continuation: CheckedContinuation<Answer, Never>) -> Bool {
        guard waiting[key] == nil else { return false }
        waiting[key] = continuation
        return true
    }

    /// The waiter for `key`, removed, to be resumed outside the lock.
    mutating func take(_ key: Key) -> CheckedContinuation<Answer, Never>? {
        waiting.removeValue(forKey: key)
    }

    /// Every GATT waiter on `handle` of `address` (an error response names the attribute, not the request).
    mutating func take(address: UInt64, handle: UInt32) -> [CheckedContinuation<Answer, Never>] {
        let keys = waiting.keys.filter { $0.address == address && $0.handle == handle }
        return keys.compactMap { waiting.removeValue(forKey: $0) }
    }

    /// Every connect waiting for a free slot.
    mutating func takeSlotWaiters() -> [CheckedContinuation<Answer, Never>] {
        let keys = waiting.keys.filter { if case .freeSlot = $0 { true } else { false } }
        return keys.compactMap { waiting.removeValue(forKey: $0) }
    }

    /// Every waiter of `address` (its link went), or of every device (`nil`: the proxy went).
    mutating func takeAll(address: UInt64?) -> [CheckedContinuation<Answer, Never>] {
        let keys = waiting.keys.filter { address == nil || $0.address == address }
        return keys.compactMap { waiting.removeValue(forKey: $0) }
    }
}
