/// How long to wait before the next attempt to reach a proxy: doubling from `first` up to `maximum`, back to `first`
/// once a connection got ready. Pure; the client asks it after every failure. An ESP32 that reboots is back within
/// seconds, one that lost power may be gone for hours: the cap keeps retries cheap without waiting long after it returns.
public struct ReconnectBackoff: Sendable, Equatable {
    public let first: Duration
    public let maximum: Duration
    private(set) var failures = 0

    public init(first: Duration = .seconds(1), maximum: Duration = .seconds(60)) {
        self.first = first
        self.maximum = maximum
    }

    /// The delay before the next attempt, counting this failure.
    public mutating func failed() -> Duration {
        defer { failures += 1 }
        var delay = first
        for _ in 0..<min(failures, 30) where delay < maximum { delay *= 2 }
        return min(delay, maximum)
    }

    /// A connection got ready: the next failure starts from `first` again.
    public mutating func succeeded() { failures = 0 }
}
