/// Exponential backoff with jitter for reconnect attempts: attempt n waits a random time between half and
/// all of `min × 2ⁿ`, capped at `max`. Jitter keeps a fleet of gateways from reconnecting in lockstep after a
/// broker restart. Pure value: the random source is a parameter so tests can pin it.
public struct ReconnectBackoff: Sendable, Equatable {
    public var minimumDelay: Duration
    public var maximumDelay: Duration
    public private(set) var failedAttempts = 0

    public init(minimumDelay: Duration, maximumDelay: Duration) {
        self.minimumDelay = minimumDelay
        self.maximumDelay = max(minimumDelay, maximumDelay)
    }

    /// The delay before the next attempt; counts this attempt as failed.
    public mutating func nextDelay<R: RandomNumberGenerator>(using random: inout R) -> Duration {
        let exponent = min(failedAttempts, 30)
        failedAttempts += 1
        let base = min(seconds(minimumDelay) * Double(1 << exponent), seconds(maximumDelay))
        let jittered = Double.random(in: (base / 2)...base, using: &random)
        return .milliseconds(Int64((max(jittered, seconds(minimumDelay) / 2) * 1000).rounded()))
    }

    public mutating func nextDelay() -> Duration {
        var generator = SystemRandomNumberGenerator()
        return nextDelay(using: &generator)
    }

    /// A connection succeeded: the next failure starts from the minimum again.
    public mutating func reset() { failedAttempts = 0 }

    private func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
