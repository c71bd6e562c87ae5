/// Puts a Unix-millisecond time on every sample of one E4 stream, counting samples from the start of the
/// connection at the stream's nominal rate.
///
/// Why counting: E4 packets carry no timestamps, and arrival times are useless for spacing samples — BlueZ
/// hands notifications over in bursts, so eleven BVP samples arriving together are not simultaneous. The
/// sample numbered *n* is at `start + n × 1000 / rate` ms, computed afresh from *n* in integer arithmetic
/// (rounded to the nearest millisecond), so an hour of packets ends exactly an hour after the start: nothing
/// is added up, so no rounding accumulates. What this cannot see is the E4's own crystal running a few ppm
/// fast or slow (tens of ms per hour); nothing in the packets would show it.
///
/// Lost packets: BLE retransmits at the link layer, so notifications on a live connection are lost only when
/// a buffer overflows; a reconnect starts a new clock anyway. Only EDA packets carry a counter
/// (`E4EDAPacket.counter`, modeled as +1 per packet, wrapping at 65 536). When it is given, the clock
/// re-anchors on it: a step of *k* > 1 means *k* − 1 packets were lost, and their samples' time is skipped.
/// A step of 0, a step backwards or one larger than `maximumCounterGap` packets cannot be a loss on a live
/// connection (its supervision timeout is at most 32 s) — it is a repeat, a reset or a counter we misread —
/// so the clock carries on without skipping and counts a `counterDiscontinuities`. The other streams have no
/// counter and are timed contiguously.
///
/// Pure and I/O-free: no clock is read; the same packets give the same times.
public struct E4SampleClock: Sendable, Equatable {
    /// The time of the first sample: when the host wrote the start command, in Unix milliseconds.
    public let startUnixMilliseconds: Int64
    public let samplesPerSecond: Int
    /// The samples of a whole packet: what `timestamps(ofPacketWithCounter:)` times, and what each lost packet
    /// skips.
    public let samplesPerPacket: Int
    /// The largest counter step still read as lost packets (default: 64 packets, 96 s of EDA).
    public let maximumCounterGap: Int

    /// The number of the next packet's first sample.
    public private(set) var nextSampleIndex: Int64 = 0
    public private(set) var lostPackets: Int64 = 0
    public private(set) var counterDiscontinuities = 0
    private var lastCounter: UInt16?

    public init(startUnixMilliseconds: Int64, samplesPerSecond: Int, samplesPerPacket: Int,
                maximumCounterGap: Int = 64) {
        self.startUnixMilliseconds = startUnixMilliseconds
        self.samplesPerSecond = max(1, samplesPerSecond)
        self.samplesPerPacket = max(1, samplesPerPacket)
        self.maximumCounterGap = max(1, maximumCounterGap)
    }

    public init(startUnixMilliseconds: Int64, stream: E4Stream) {
        self.init(startUnixMilliseconds: startUnixMilliseconds, samplesPerSecond: stream.samplesPerSecond,
                  samplesPerPacket: stream.samplesPerPacket)
    }

    /// The time of sample number `index` (0 is the first sample of the connection).
    public func timestamp(ofSample index: Int64) -> Int64 {
        let rate = Int64(samplesPerSecond)
        return startUnixMilliseconds + (index * 1000 * 2 + rate) / (2 * rate)
    }

    /// The times of the next packet's `samplesPerPacket` samples, oldest first. `counter` is the packet's
    /// counter where the stream has one (EDA), nil otherwise.
    public mutating func timestamps(ofPacketWithCounter counter: UInt16? = nil) -> [Int64] {
        timestamps(ofSamples: samplesPerPacket, counter: counter)
    }

    /// The times of the next packet's `count` samples, oldest first: for a stream whose packets do not all hold
    /// the same number (the accelerometer decodes every whole triplet a notification carries), so the next
    /// packet starts right after the samples this one really held. Packets lost before a counter step are
    /// skipped at `samplesPerPacket` samples each, since how many they held is unknowable.
    public mutating func timestamps(ofSamples count: Int, counter: UInt16? = nil) -> [Int64] {
        if let counter {
            if let lastCounter {
                let step = Int(counter &- lastCounter)
                if step >= 2 && step <= maximumCounterGap + 1 {
                    lostPackets += Int64(step - 1)
                    nextSampleIndex += Int64(step - 1) * Int64(samplesPerPacket)
                } else if step != 1 {
                    counterDiscontinuities += 1
                }
            }
            lastCounter = counter
        }
        let first = nextSampleIndex
        nextSampleIndex += Int64(max(0, count))
        return (first..<nextSampleIndex).map(timestamp(ofSample:))
    }
}
