/// Which RSSI readings of managed devices reach their retained state. BlueZ reports one per advertisement it hears
/// while discovering (about one a second per device); rewriting the retained state, and Home Assistant's history,
/// at that rate for a number that wobbles by a few dB would be noise. A reading goes out when it is the first,
/// when it moved by `step` dB or more, or when `interval` passed since the last one went out and it differs.
struct SignalStrengthReports: Sendable {
    let step: Int
    let interval: Duration
    private var last: [String: (rssi: Int, at: ContinuousClock.Instant)] = [:]

    init(step: Int = 5, interval: Duration = .seconds(60)) {
        self.step = step
        self.interval = interval
    }

    /// Whether `rssi` heard from `device` at `now` goes out.
    mutating func report(_ rssi: Int, device: String, at now: ContinuousClock.Instant) -> Bool {
        if let previous = last[device] {
            let moved = abs(rssi - previous.rssi) >= step
            let stale = now - previous.at >= interval && rssi != previous.rssi
            guard moved || stale else { return false }
        }
        last[device] = (rssi, now)
        return true
    }

    mutating func forget(_ device: String) { last[device] = nil }
}
