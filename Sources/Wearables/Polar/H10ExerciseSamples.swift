import FoundationEssentials

/// An H10 recording as fetched (`SAMPLES.BPB`): `PbExerciseSamples` (`exercise_samples.proto`), the fields the
/// SDK reads for the H10 (`BDBleApiImpl.fetchExercise`): the recording interval, and heart rates (bpm, one per
/// interval) or, when `rr_samples` is present, RR intervals (ms, one per beat). Which one a file holds follows
/// from how the recording was started. `heart_rate_offline` (index ranges without sensor contact) is kept too.
///
/// The file holds no start time: the public sources show none for the H10 (the SDK dates H10 entries with the
/// phone's clock when listing), so `sampleTimes(start:)` takes it from the caller, e.g. the directory entry's
/// `created` when the device sets it, or the time the driver started the recording.
/// `encode` is for simulated sensors; `decode(encode(x)) == x`.
public struct H10ExerciseSamples: Sendable, Hashable {
    /// The whole `PbDuration`, in milliseconds.
    public var intervalMilliseconds: UInt64
    public var heartRates: [UInt32]
    /// Nil when the file has no `rr_samples` (a heart-rate recording).
    public var rrIntervalsMilliseconds: [UInt32]?
    /// `heart_rate_offline`: sample index ranges, start and stop, as the device wrote them.
    public var heartRateOffline: [(start: UInt32, stop: UInt32)] { offline.map { ($0.start, $0.stop) } }

    private var offline: [OfflineRange]

    private struct OfflineRange: Sendable, Hashable {
        var start: UInt32
        var stop: UInt32
    }

    public init(intervalMilliseconds: UInt64, heartRates: [UInt32] = [], rrIntervalsMilliseconds: [UInt32]? = nil,
                heartRateOffline: [(start: UInt32, stop: UInt32)] = []) {
        self.intervalMilliseconds = intervalMilliseconds
        self.heartRates = heartRates
        self.rrIntervalsMilliseconds = rrIntervalsMilliseconds
        self.offline = heartRateOffline.map { OfflineRange(start: $0.start, stop: $0.stop) }
    }

    public static func decode(_ bytes: [UInt8]) throws(GATTCodecError) -> H10ExerciseSamples {
        let samples = try PSFTPProtobuf.decode(Psftp_PbExerciseSamples.self, bytes)
        let duration = samples.recordingInterval
        let milliseconds = ((UInt64(duration.hours) * 60 + UInt64(duration.minutes)) * 60 + UInt64(duration.seconds)) * 1000 + UInt64(duration.millis)
        return H10ExerciseSamples(intervalMilliseconds: milliseconds, heartRates: samples.heartRateSamples,
                                  rrIntervalsMilliseconds: samples.hasRrSamples ? samples.rrSamples.rrIntervals : nil,
                                  heartRateOffline: samples.heartRateOffline.map { ($0.startIndex, $0.stopIndex) })
    }

    /// Writes the interval as whole seconds and milliseconds (how the SDK writes a recording's interval); an
    /// interval whose seconds do not fit `PbDuration`'s 32 bits (only a decoded hostile file has one) is spread
    /// over hours, minutes, seconds and milliseconds, so every decoded value encodes back.
    public func encode() throws(GATTCodecError) -> [UInt8] {
        var samples = Psftp_PbExerciseSamples()
        samples.recordingInterval = Self.duration(milliseconds: intervalMilliseconds)
        samples.heartRateSamples = heartRates
        if let rrIntervalsMilliseconds { samples.rrSamples.rrIntervals = rrIntervalsMilliseconds }
        samples.heartRateOffline = offline.map { range in
            var message = Psftp_PbSensorOffline()
            message.startIndex = range.start
            message.stopIndex = range.stop
            return message
        }
        return PSFTPProtobuf.encode(samples)
    }

    private static func duration(milliseconds: UInt64) -> Psftp_PbDuration {
        var duration = Psftp_PbDuration()
        var rest = milliseconds
        if rest / 1000 > UInt64(UInt32.max) {
            // Each part takes what it can hold; what a decoder can produce (each part at most UInt32.max) always fits.
            duration.hours = UInt32(min(rest / 3_600_000, UInt64(UInt32.max)))
            rest -= UInt64(duration.hours) * 3_600_000
            duration.minutes = UInt32(min(rest / 60_000, UInt64(UInt32.max)))
            rest -= UInt64(duration.minutes) * 60_000
        }
        duration.seconds = UInt32(min(rest / 1000, UInt64(UInt32.max)))
        rest -= UInt64(duration.seconds) * 1000
        if rest != 0 { duration.millis = UInt32(clamping: rest) }
        return duration
    }

    /// The time of each heart rate: `start`, then one interval apart.
    public func sampleTimes(start: Date) -> [Date] {
        heartRates.indices.map { start.addingTimeInterval(Double($0) * Double(intervalMilliseconds) / 1000) }
    }
}
