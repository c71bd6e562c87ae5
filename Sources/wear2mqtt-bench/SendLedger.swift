#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// CLOCK_MONOTONIC in nanoseconds: the one clock both ends of a latency measurement read (the simulator and
/// the subscriber run in this process).
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// When each benchmark sample left the simulator: per device, a ring of (sequence counter, send instant), and
/// the highest counter sent. The sensors write it just before they notify; the subscriber reads it when the
/// sample arrives, so latency is "simulator send → subscriber receipt" on one clock.
///
/// One lock per device, so a hundred sensors do not contend with each other. The ring holds the last
/// `ringSize` sends (41 s at 200 Hz); a sample arriving later than that has no send instant and is counted
/// as unmatched rather than guessed.
final class SendLedger: Sendable {
    static let ringSize = 8192

    private struct DeviceRecord {
        var counters = [UInt64](repeating: 0, count: SendLedger.ringSize)
        var instants = [UInt64](repeating: 0, count: SendLedger.ringSize)
        /// The highest counter whose notification went out.
        var sent: UInt64 = 0
    }

    private final class Entry: Sendable {
        let record = Mutex(DeviceRecord())
    }

    private let entries: [Entry]

    init(deviceCount: Int) {
        entries = (0..<deviceCount).map { _ in Entry() }
    }

    var deviceCount: Int { entries.count }

    /// Called just before the notification of `counter` is handed to the simulated link.
    func record(device: Int, counter: UInt64, at instant: UInt64) {
        entries[device].record.withLock { record in
            let slot = Int(counter % UInt64(Self.ringSize))
            record.counters[slot] = counter
            record.instants[slot] = instant
            record.sent = max(record.sent, counter)
        }
    }

    /// The notification of `counter` was not sent after all (nobody subscribed yet): it will be reused.
    func retract(device: Int, counter: UInt64) {
        entries[device].record.withLock { record in
            let slot = Int(counter % UInt64(Self.ringSize))
            if record.counters[slot] == counter { record.counters[slot] = 0 }
            if record.sent == counter { record.sent = counter - 1 }
        }
    }

    /// The send instant of `counter`, or nil when it was never sent or has left the ring.
    func sendInstant(device: Int, counter: UInt64) -> UInt64? {
        entries[device].record.withLock { record in
            let slot = Int(counter % UInt64(Self.ringSize))
            return record.counters[slot] == counter ? record.instants[slot] : nil
        }
    }

    /// The highest counter sent so far by each device.
    func sentCounters() -> [UInt64] {
        entries.map { entry in entry.record.withLock { $0.sent } }
    }
}

/// Records the Bose glasses sent (one per sensor per period), counted as they leave the simulator.
final class RecordCounter: Sendable {
    private let count = Atomic<UInt64>(0)

    func add(_ records: Int) {
        count.add(UInt64(records), ordering: .relaxed)
    }

    var total: UInt64 { count.load(ordering: .relaxed) }
}
