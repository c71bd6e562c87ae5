/// Turns decoded BVP packets back into a pulse wave: the running sum of the green deltas, negated.
///
/// The packets carry changes, so the wave is rebuilt by adding them up from zero at the start of the
/// connection; its level is relative (sensor counts from an arbitrary origin), as a PPG's always is, and the
/// beat detector's band-pass ignores the origin. **This reading is modeled on `main.py`**, which calls the
/// values deltas and keeps running offsets of both channels, weights green ten times red (green light is what
/// wrist PPG measures the pulse with), and negates its output so that more blood — less reflected light —
/// points up, as the SDK's BVP does. A lost packet leaves a step of its missing deltas in the wave; the
/// detector's high-pass turns that into a short transient that its outlier checks reject.
///
/// Pure: the same packets give the same values. Start a new decoder for every connection.
public struct E4BVPDeltaDecoder: Sendable, Equatable {
    /// Running sums of the deltas seen so far, in sensor counts.
    public private(set) var greenLevel = 0
    public private(set) var redLevel = 0

    public init() {}

    /// The BVP value after each sample of `packet`, oldest first: `-greenLevel`.
    public mutating func decode(_ packet: E4BVPPacket) -> [Double] {
        packet.deltas.map { delta in
            greenLevel += Int(delta.green)
            redLevel += Int(delta.red)
            return Double(-greenLevel)
        }
    }
}

/// The simulated E4's side of `E4BVPDeltaDecoder`: BVP samples in → packets out.
///
/// Each delta is the difference between the wanted level and the level the decoder will have reached, so
/// rounding never accumulates: the decoded wave stays within half a count of the input wherever the input
/// changes by less than 64 counts per sample, and where it changes faster (a motion artefact) it is slew-limited
/// and catches up afterwards, as a saturating sensor would. The red channel carries the same wave scaled by
/// `redScale` — a modeled stand-in, since nothing decodes red on the host.
public struct E4BVPDeltaEncoder: Sendable, Equatable {
    public let redScale: Double
    private var greenLevel = 0
    private var redLevel = 0
    private var pending: [E4BVPPacket.Delta] = []

    public init(redScale: Double = 0.5) { self.redScale = redScale }

    /// Adds one BVP sample (sensor counts, pulse pointing up) and returns a packet once eleven are collected.
    public mutating func append(_ bvp: Double) -> E4BVPPacket? {
        let green = Self.step(from: &greenLevel, to: -bvp)
        let red = Self.step(from: &redLevel, to: -bvp * redScale)
        // Both steps lie in deltaRange by construction.
        guard let delta = try? E4BVPPacket.Delta(green: green, red: red) else { return nil }
        pending.append(delta)
        guard pending.count == E4BVPPacket.samplesPerPacket else { return nil }
        defer { pending.removeAll(keepingCapacity: true) }
        return try? E4BVPPacket(deltas: pending)
    }

    private static func step(from level: inout Int, to target: Double) -> Int8 {
        let wanted = target.isFinite ? target.rounded() - Double(level) : 0
        let lower = Double(E4BVPPacket.deltaRange.lowerBound)
        let upper = Double(E4BVPPacket.deltaRange.upperBound)
        let delta = Int8(min(max(wanted, lower), upper))
        level += Int(delta)
        return delta
    }
}
