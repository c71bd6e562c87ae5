/// The write commands on their way to one device, in the order they were written. One task delivers them, each at
/// its due time: separate timers would let two commands overtake each other, and ATT keeps a link's writes in order
/// (a DFU image is a run of them). A write request waits for the commands written before it, as it would queue
/// behind them on the air.
struct CommandQueue {
    struct Command {
        let link: Int
        let characteristic: GATTLayout.Characteristic
        let value: [UInt8]
        let due: ContinuousClock.Instant
    }

    private var pending: [Command] = []
    /// Commands ever queued, and ever taken (delivered or dropped because their link ended).
    private(set) var written = 0
    private var taken = 0
    private var waiters: [(ticket: Int, continuation: CheckedContinuation<Void, Never>)] = []
    private var isDelivering = false

    /// Queues `command`; true when no task is delivering, so the caller must start one.
    mutating func append(_ command: Command) -> Bool {
        pending.append(command)
        written += 1
        guard !isDelivering else { return false }
        isDelivering = true
        return true
    }

    /// The oldest command, still queued; nil when there is none, which ends the delivering task's turn.
    mutating func peek() -> Command? {
        guard let first = pending.first else {
            isDelivering = false
            return nil
        }
        return first
    }

    /// The oldest command leaves the queue; call `markTaken()` once it was handed over.
    mutating func removeFirst() -> Command { pending.removeFirst() }

    /// One more command was handed over (or dropped): writes waiting for it go ahead.
    mutating func markTaken() {
        taken += 1
        let ready = waiters.filter { $0.ticket <= taken }
        waiters.removeAll { $0.ticket <= taken }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Whether the first `ticket` commands are all handed over.
    func hasTaken(_ ticket: Int) -> Bool { taken >= ticket }

    mutating func wait(for ticket: Int, _ continuation: CheckedContinuation<Void, Never>) {
        if taken >= ticket { continuation.resume() } else { waiters.append((ticket, continuation)) }
    }

    /// The simulator stops: nobody delivers any more, nobody waits.
    mutating func abandon() {
        pending = []
        isDelivering = false
        for waiter in waiters { waiter.continuation.resume() }
        waiters = []
    }
}
