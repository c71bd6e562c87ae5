import Wearables

/// Turns the bytes a bootloader confirmed into the `update` state's `progress` (percent of every image in the
/// package) and `remaining_s` (from the rate of this run), and decides when a report is worth publishing: on
/// every whole percent, or after a second without one.
///
/// Pure: the caller passes the time, so tests need no clock.
public struct DFUProgressMeter: Sendable {
    public let totalBytes: Int
    /// Confirmed bytes of the images already installed.
    private var completedBytes = 0
    private var currentBytes = 0
    /// The first confirmation of this run (bytes and when), for the rate. A resumed transfer starts its rate anew
    /// so the bytes the bootloader kept do not count as fast ones.
    private var rateStart: (bytes: Int, at: ContinuousClock.Instant)?
    private var lastReport: (percent: Int, at: ContinuousClock.Instant)?

    public init(totalBytes: Int) {
        self.totalBytes = max(0, totalBytes)
    }

    /// Bytes confirmed of the whole package.
    public var confirmedBytes: Int { completedBytes + currentBytes }

    /// 0…100 with one decimal.
    public var percent: Double {
        guard totalBytes > 0 else { return 100 }
        return (Double(min(confirmedBytes, totalBytes)) * 1000 / Double(totalBytes)).rounded(.down) / 10
    }

    /// The image being sent has `progress`; returns the state to publish, or nil when the last one is recent.
    /// Progress never goes back: after a reconnect the new client reports nothing confirmed until the bootloader
    /// has said what it kept, and an object it discarded is sent again under the percent already shown.
    public mutating func update(_ progress: DFUTransferProgress, at now: ContinuousClock.Instant) -> OperationProgress? {
        currentBytes = max(currentBytes, progress.acknowledgedBytes)
        if rateStart == nil { rateStart = (confirmedBytes, now) }
        let whole = Int(percent)
        if let last = lastReport, last.percent == whole, now - last.at < .seconds(1) { return nil }
        lastReport = (whole, now)
        return report(at: now)
    }

    /// The current image is installed; the next starts from zero.
    public mutating func imageCompleted(size: Int) {
        completedBytes += size
        currentBytes = 0
    }

    /// The link dropped: the rate starts again with the next confirmation.
    public mutating func linkLost() { rateStart = nil }

    /// `updating`, with the percent and, once bytes have flowed for a while, the time left.
    public func report(at now: ContinuousClock.Instant) -> OperationProgress {
        OperationProgress(state: "updating", percent: percent, remainingSeconds: remainingSeconds(at: now))
    }

    func remainingSeconds(at now: ContinuousClock.Instant) -> Double? {
        guard let start = rateStart else { return nil }
        let elapsed = now - start.at
        let moved = confirmedBytes - start.bytes
        guard moved > 0, elapsed >= .milliseconds(500) else { return nil }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let left = Double(max(0, totalBytes - confirmedBytes)) / (Double(moved) / seconds)
        return (left * 10).rounded() / 10
    }
}
