/// When each sample of a PMD frame was taken, and Polar's clock in Unix time.
///
/// A frame's timestamp is the time of its last sample. The SDK (`polarofficial/polar-ble-sdk` Android
/// `pmd/model/PmdTimeStampUtils.kt`, `getTimeStamps`; vectors in `PmdTimeStampUtilsTest.kt`) spreads the
/// samples before it evenly: from the previous frame's timestamp when there is one (the interval between the
/// two frames divided by the sample count, so the device's own clock sets the rate), otherwise back from the
/// last sample by 1 / sample rate. Times are rounded half to even, as Kotlin's `round` does. PPI samples are
/// not evenly spaced: `ppiTimestamps` walks back by each interval instead (`PpiData.dataFromType0`).
public enum PMDSampleTiming {
    /// Why sample times cannot be given (the SDK's `SampleSizeMissingError`, `TimeStampAndFrequencyZeroError`,
    /// `NegativeTimeStampError`).
    public enum Failure: Error, Sendable, Equatable {
        case noSamples
        /// No previous frame and no sample rate to spread the samples by.
        case noRate
        /// The previous frame is not earlier than this one.
        case previousFrameNotEarlier
        /// The first sample would fall at or before the Polar epoch (a device whose clock was never set).
        case beforeEpoch
    }

    /// Seconds from 1970-01-01 to 2000-01-01, both UTC.
    public static let epochOffsetSeconds: Int64 = 946_684_800

    /// Polar's nanoseconds since 2000-01-01T00:00:00 UTC as Unix milliseconds (truncated).
    public static func unixMilliseconds(fromPolarNanoseconds nanoseconds: UInt64) -> Int64 {
        epochOffsetSeconds * 1000 + Int64(nanoseconds / 1_000_000)
    }

    /// Unix milliseconds as Polar nanoseconds; nil before 2000.
    public static func polarNanoseconds(fromUnixMilliseconds milliseconds: Int64) -> UInt64? {
        let sinceEpoch = milliseconds - epochOffsetSeconds * 1000
        guard sinceEpoch >= 0 else { return nil }
        return UInt64(sinceEpoch).multipliedReportingOverflow(by: 1_000_000).overflow ? nil : UInt64(sinceEpoch) * 1_000_000
    }

    /// The time of each of `sampleCount` samples of a frame stamped `frameTimestamp`, oldest first; the last is
    /// the frame's own. `previousFrameTimestamp` is the timestamp of the last frame of the same measurement and
    /// frame type since the stream started (nil for the first frame; the SDK forgets it on stop), `sampleRate`
    /// the selected rate in Hz (only needed without a previous frame).
    public static func timestamps(frameTimestamp: UInt64, previousFrameTimestamp: UInt64?, sampleCount: Int,
                                  sampleRate: Int) throws(Failure) -> [UInt64] {
        guard sampleCount > 0 else { throw .noSamples }
        let previous = previousFrameTimestamp.flatMap { $0 == 0 ? nil : $0 }
        let interval: Double
        if let previous {
            guard frameTimestamp > previous else { throw .previousFrameNotEarlier }
            interval = Double(frameTimestamp - previous) / Double(sampleCount)
        } else {
            guard sampleRate > 0 else { throw .noRate }
            interval = 1_000_000_000 / Double(sampleRate)
        }
        guard Double(frameTimestamp) >= interval * Double(sampleCount) else { throw .beforeEpoch }
        let first: Double
        if let previous {
            first = Double(previous) + interval
        } else {
            first = Double(frameTimestamp) - interval * Double(sampleCount - 1)
            guard first > 0 else { throw .beforeEpoch }
        }
        var times = (0..<(sampleCount - 1)).map { index in
            // Near the top of UInt64 a Double rounds up to 2^64, which UInt64 cannot hold.
            let time = (first + interval * Double(index)).rounded(.toNearestOrEven)
            return time >= 18_446_744_073_709_551_616.0 ? frameTimestamp : min(UInt64(time), frameTimestamp)
        }
        times.append(frameTimestamp)
        return times
    }

    /// PPI samples: the last at the frame's time, each earlier one its successor's time minus the successor's
    /// interval. A frame stamped 0 (the SDK's test vector) leaves every sample at 0, as the SDK does; an
    /// interval that would go before the epoch stops at 0 instead of wrapping.
    public static func ppiTimestamps(frameTimestamp: UInt64, intervalsMilliseconds: [UInt16]) -> [UInt64] {
        guard frameTimestamp != 0 else { return intervalsMilliseconds.map { _ in 0 } }
        var times = [UInt64](repeating: 0, count: intervalsMilliseconds.count)
        var current = frameTimestamp
        for index in intervalsMilliseconds.indices.reversed() {
            times[index] = current
            let step = UInt64(intervalsMilliseconds[index]) * 1_000_000
            current = current >= step ? current - step : 0
        }
        return times
    }
}
