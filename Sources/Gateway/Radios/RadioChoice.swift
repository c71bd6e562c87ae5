import DBus

/// Which radio a session connects through, among those that heard the device lately and have a free slot: the
/// loudest, except that the radio used last time keeps it unless another is louder by `hysteresis` — a wearable
/// between two rooms would otherwise change radio at every reconnect on a few dB of fading.
public struct RadioChoice: Sendable, Equatable {
    public struct Candidate: Sendable, Equatable {
        public var adapter: ObjectPath
        /// Smoothed dBm.
        public var rssi: Int

        public init(adapter: ObjectPath, rssi: Int) {
            self.adapter = adapter
            self.rssi = rssi
        }
    }

    public var hysteresis: Int

    public init(hysteresis: Int = 6) {
        self.hysteresis = hysteresis
    }

    /// Nil when no radio qualifies (the caller falls back to the configured adapter, where discovery looks).
    public func choose(_ candidates: [Candidate], previous: ObjectPath?) -> ObjectPath? {
        // Ties go to the first listed (the local adapter is listed first), so the same input always gives the same radio.
        guard let loudest = candidates.enumerated().max(by: { a, b in
            a.element.rssi < b.element.rssi || (a.element.rssi == b.element.rssi && a.offset > b.offset)
        })?.element else { return nil }
        if let previous, let kept = candidates.first(where: { $0.adapter == previous }), loudest.rssi - kept.rssi < hysteresis {
            return kept.adapter
        }
        return loudest.adapter
    }
}
