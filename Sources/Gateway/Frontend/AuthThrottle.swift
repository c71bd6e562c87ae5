/// How often a browser's address may try a token: the first `freeFailures` wrong tokens cost nothing (a typo, a
/// stale saved token), then each further attempt waits twice as long after the last failure as the one before,
/// from 1 s up to `longestWait`. An attempt made earlier is refused without the token being looked at, so guessing
/// runs at about one try a minute. A right token clears the address; an address's record is forgotten `forgetAfter`
/// its last failure, and at most `capacity` addresses are kept (the oldest failure goes first), so a flood of
/// addresses costs bounded memory. Pure: the time of each event is given.
///
/// Behind a reverse proxy every browser has the proxy's address; there the proxy (Home Assistant's ingress) is
/// the one that signs people in.
struct AuthThrottle: Sendable {
    struct Record: Sendable {
        var failures: Int
        var lastFailure: ContinuousClock.Instant
    }

    let freeFailures: Int
    let longestWait: Duration
    let forgetAfter: Duration
    let capacity: Int
    private(set) var records: [String: Record] = [:]

    init(freeFailures: Int = 5, longestWait: Duration = .seconds(60), forgetAfter: Duration = .seconds(15 * 60),
         capacity: Int = 4096) {
        self.freeFailures = freeFailures
        self.longestWait = longestWait
        self.forgetAfter = forgetAfter
        self.capacity = capacity
    }

    /// How long `peer` must still wait before a token is looked at; nil: now.
    func wait(for peer: String, at now: ContinuousClock.Instant) -> Duration? {
        guard let record = records[peer], record.failures >= freeFailures else { return nil }
        let allowed = record.lastFailure + delay(afterFailures: record.failures)
        return allowed > now ? allowed - now : nil
    }

    /// The wait after `failures` wrong tokens in a row: 1 s after the first beyond the free ones, doubling.
    func delay(afterFailures failures: Int) -> Duration {
        guard failures >= freeFailures else { return .zero }
        let doublings = min(failures - freeFailures, 16)
        return min(.seconds(1 << doublings), longestWait)
    }

    mutating func failed(_ peer: String, at now: ContinuousClock.Instant) {
        forget(before: now - forgetAfter)
        if records[peer] == nil, records.count >= capacity,
           let oldest = records.min(by: { $0.value.lastFailure < $1.value.lastFailure })?.key {
            records[oldest] = nil
        }
        records[peer, default: Record(failures: 0, lastFailure: now)].failures += 1
        records[peer]?.lastFailure = now
    }

    mutating func succeeded(_ peer: String) { records[peer] = nil }

    private mutating func forget(before cutoff: ContinuousClock.Instant) {
        records = records.filter { $0.value.lastFailure >= cutoff }
    }
}
