import Wearables

/// The device side of a framed vendor control channel, as a pure value: segments written to the request
/// characteristic go in, the segments to notify come out. Shared by the simulated GoFIT band and the simulated
/// ActiGraph Link; what a request does is the caller's `execute`.
///
/// - **Frames.** Segments are reassembled (`FrameReassembler`); a frame that fails the segment rules, the length
///   field or the CRC is dropped and counted in `malformedFrames`, never answered. A frame whose opcode is 0x80
///   or above is not a request and is ignored. Responses are segmented at `segmentSize` (20 unless the link's
///   MTU is known to be larger).
/// - **Retransmission.** The last response is kept with its request's opcode and sequence; a request repeating
///   both gets it again without being executed. The cache is per connection (`connectionEnded()`): a host's
///   retransmission only happens within one connection, and a host starts its sequence numbers afresh on each.
public struct FramedResponder: Sendable {
    /// The ATT value size responses are cut to, header byte included.
    public var segmentSize = FrameSegmenter.defaultSegmentSize
    public private(set) var malformedFrames = 0
    /// Requests executed (retransmissions answered from the cache are not).
    public private(set) var requests = 0
    public private(set) var retransmissionsAnswered = 0
    private var reassembler = FrameReassembler()
    private var lastResponse: (requestOpcode: UInt8, sequence: UInt8, frame: VendorFrame)?

    public init() {}

    /// One segment written to the request characteristic; answers the segments to notify (none until a frame is
    /// complete, none for a malformed frame or one that is not a request).
    public mutating func receive(_ segment: [UInt8], execute: (VendorFrame) -> VendorFrame) -> [[UInt8]] {
        let droppedBefore = reassembler.droppedFrames
        let completed = reassembler.append(segment)
        malformedFrames += reassembler.droppedFrames - droppedBefore
        guard let completed else { return [] }
        let frame: VendorFrame
        do {
            frame = try VendorFrame(decoding: completed)
        } catch {
            malformedFrames += 1
            return []
        }
        guard let response = respond(to: frame, execute: execute) else { return [] }
        return segments(of: response)
    }

    /// The response to one well-formed frame; nil when it is not a request.
    public mutating func respond(to frame: VendorFrame, execute: (VendorFrame) -> VendorFrame) -> VendorFrame? {
        guard frame.opcode < 0x80 else { return nil }
        if let last = lastResponse, last.requestOpcode == frame.opcode, last.sequence == frame.sequence {
            retransmissionsAnswered += 1
            return last.frame
        }
        requests += 1
        let response = execute(frame)
        lastResponse = (frame.opcode, frame.sequence, response)
        return response
    }

    /// `frame` cut into notifications of `segmentSize`.
    public func segments(of frame: VendorFrame) -> [[UInt8]] {
        FrameSegmenter.segments(of: frame.encoded(), segmentSize: segmentSize)
    }

    /// The link went: the cached response and any half-received frame go with it; the segment size returns to
    /// the default MTU's.
    public mutating func connectionEnded() {
        lastResponse = nil
        reassembler = FrameReassembler()
        segmentSize = FrameSegmenter.defaultSegmentSize
    }
}
