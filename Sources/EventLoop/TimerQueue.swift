import HeapModule

/// The loop's timers, as a value: what is due at an instant, and when the next one is. Pure, so its order and
/// cancellation are tested without a thread.
public struct TimerQueue<Task> {
    /// A scheduled timer, for `cancel`.
    public struct ID: Hashable, Sendable {
        let value: UInt64
    }

    private struct Entry: Comparable {
        var deadline: ContinuousClock.Instant
        var id: UInt64
        static func < (lhs: Entry, rhs: Entry) -> Bool { (lhs.deadline, lhs.id) < (rhs.deadline, rhs.id) }
        static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.id == rhs.id }
    }

    private var heap = Heap<Entry>()
    private var tasks: [UInt64: Task] = [:]
    private var nextID: UInt64 = 0

    public init() {}

    public var isEmpty: Bool { tasks.isEmpty }

    /// Schedules `task` for `deadline`; timers with the same deadline run in the order they were scheduled.
    public mutating func schedule(at deadline: ContinuousClock.Instant, _ task: Task) -> ID {
        nextID &+= 1
        heap.insert(Entry(deadline: deadline, id: nextID))
        tasks[nextID] = task
        return ID(value: nextID)
    }

    /// Forgets a timer that has not run; nothing happens for one that ran or was cancelled.
    public mutating func cancel(_ id: ID) {
        tasks[id.value] = nil
    }

    /// The earliest deadline of a timer still scheduled.
    public mutating func nextDeadline() -> ContinuousClock.Instant? {
        while let first = heap.min, tasks[first.id] == nil { heap.removeMin() }
        return heap.min?.deadline
    }

    /// Removes and answers the tasks due at `now`, earliest first.
    public mutating func takeDue(at now: ContinuousClock.Instant) -> [Task] {
        var due: [Task] = []
        while let first = heap.min, first.deadline <= now {
            heap.removeMin()
            if let task = tasks.removeValue(forKey: first.id) { due.append(task) }
        }
        return due
    }
}

extension TimerQueue: Sendable where Task: Sendable {}
