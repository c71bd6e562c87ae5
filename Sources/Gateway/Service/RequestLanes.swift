import Synchronization

/// How many requests run in each lane (`GatewayService.serveRequests`): quick ones (bridge queries, device
/// commands) and long ones (scans, syncs, firmware updates, recording fetches), each counted from when it is taken
/// until its answer is published. A long request never takes a quick slot, so a `health_check` is answered while 64
/// scans wait out their time.
final class RequestLanes: Sendable {
    let quickLimit: Int
    let longLimit: Int
    private let quick = Atomic<Int>(0)
    private let long = Atomic<Int>(0)

    init(quickLimit: Int, longLimit: Int) {
        self.quickLimit = quickLimit
        self.longLimit = longLimit
    }

    var quickRunning: Int { quick.load(ordering: .acquiring) }
    var longRunning: Int { long.load(ordering: .acquiring) }
    var quickIsFull: Bool { quickRunning >= quickLimit }

    /// Takes a slot of the lane; false when a long request finds its lane full (it is answered `BUSY`, not waited
    /// for: waiting would stop the loop, and every quick request behind it).
    func take(long isLong: Bool) -> Bool {
        guard isLong else {
            quick.add(1, ordering: .acquiringAndReleasing)
            return true
        }
        while true {
            let running = long.load(ordering: .acquiring)
            guard running < longLimit else { return false }
            if long.compareExchange(expected: running, desired: running + 1, ordering: .acquiringAndReleasing).exchanged { return true }
        }
    }

    func release(long isLong: Bool) {
        if isLong {
            long.subtract(1, ordering: .acquiringAndReleasing)
        } else {
            quick.subtract(1, ordering: .acquiringAndReleasing)
        }
    }
}
