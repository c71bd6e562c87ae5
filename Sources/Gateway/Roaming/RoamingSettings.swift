/// The knobs of the ownership rule (docs/roaming.md, "Ownership"): how much stronger, for how long, a gateway must
/// hear a device before it takes it over, and when an owner that hears nothing counts as gone.
public struct RoamingSettings: Sendable, Equatable {
    /// How often each gateway reports what it heard.
    public var reportInterval: Duration
    /// How many dB a candidate's smoothed level must exceed the owner's by.
    public var hysteresisDecibels: Double
    /// How long that margin must hold without a break before ownership moves.
    public var hysteresisDuration: Duration
    /// A gateway that has not heard a device for this long no longer counts for it.
    public var lostAfter: Duration
    /// How long a new owner waits for the previous one's handoff.
    public var releaseTimeout: Duration
    /// Weight of each new report in the smoothed level (exponential moving average), 0 < smoothing ≤ 1.
    public var smoothing: Double

    public init(reportInterval: Duration = .milliseconds(500), hysteresisDecibels: Double = 6,
                hysteresisDuration: Duration = .seconds(4), lostAfter: Duration = .seconds(8),
                releaseTimeout: Duration = .seconds(5), smoothing: Double = 0.5) {
        self.reportInterval = reportInterval
        self.hysteresisDecibels = hysteresisDecibels
        self.hysteresisDuration = hysteresisDuration
        self.lostAfter = lostAfter
        self.releaseTimeout = releaseTimeout
        self.smoothing = smoothing
    }
}
