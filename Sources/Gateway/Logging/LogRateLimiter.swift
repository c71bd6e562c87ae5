/// A token bucket for `bridge/logging`: a burst of `capacity` records, then `perSecond` a second; what it refuses
/// is counted and told with the next record it lets through, so a flood of warnings costs the broker little and
/// hides nothing about its size. Pure: the caller passes the time.
public struct LogRateLimiter: Sendable {
    public let capacity: Double
    public let perSecond: Double
    private var tokens: Double
    private var lastSeconds: Double?
    private var suppressed = 0

    public init(capacity: Int = 20, perSecond: Double = 2) {
        self.capacity = Double(capacity)
        self.perSecond = perSecond
        tokens = Double(capacity)
    }

    /// nil: refused; else how many records were refused since the last one let through.
    public mutating func admit(atSeconds now: Double) -> Int? {
        if let lastSeconds { tokens = min(capacity, tokens + max(0, now - lastSeconds) * perSecond) }
        lastSeconds = now
        guard tokens >= 1 else {
            suppressed += 1
            return nil
        }
        tokens -= 1
        defer { suppressed = 0 }
        return suppressed
    }
}
