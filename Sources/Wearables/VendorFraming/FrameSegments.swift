/// Splits a frame into ATT values ("segments"): one header byte — bit 7 final, bits 0–6 the segment's index
/// modulo 128 — then up to `segmentSize − 1` frame bytes (docs/protocols/gofit.md, "Segments").
///
/// Knows nothing of frames: any bytes are cut, and `FrameReassembler` puts them back together.
public enum FrameSegmenter {
    /// An ATT value of the default MTU (23 − 3).
    public static let defaultSegmentSize = 20

    static let finalBit: UInt8 = 0x80
    static let indexMask: UInt8 = 0x7F

    /// `segmentSize` is the whole ATT value, header byte included, so at least 2. An empty frame still takes one
    /// (final) segment, so the receiver sees something end.
    public static func segments(of frame: [UInt8], segmentSize: Int = defaultSegmentSize) -> [[UInt8]] {
        precondition(segmentSize >= 2, "a GoFIT segment holds a header byte and at least one frame byte")
        let chunkSize = segmentSize - 1
        let count = max(1, (frame.count + chunkSize - 1) / chunkSize)
        var segments: [[UInt8]] = []
        segments.reserveCapacity(count)
        for index in 0..<count {
            let start = index * chunkSize
            let end = min(start + chunkSize, frame.count)
            var header = UInt8(truncatingIfNeeded: index) & indexMask
            if index == count - 1 { header |= finalBit }
            segments.append([header] + frame[start..<end])
        }
        return segments
    }
}

/// Puts segments back into frames, following the receiver's rules of docs/protocols/gofit.md, "Segments".
///
/// - Index 0 starts a new frame; a frame still unfinished then is dropped.
/// - A segment whose index is not the next expected one (modulo 128) drops the frame in progress, and segments
///   are ignored until the next index 0. While a frame is in progress and 127 was the last index, 0 is the next
///   expected one, so a frame longer than 128 segments continues rather than restarts.
/// - An empty ATT value (no header) is ignored.
/// - A frame growing past the protocol's 65,541 bytes is dropped like a wrong index.
///
/// Each of these counts once in `droppedFrames` (the segments ignored after a drop do not count again). It does
/// not check the frame itself: `VendorFrame(decoding:)` does, and its failures are the caller's to count.
public struct FrameReassembler: Sendable {
    /// Opcode, sequence, length u16, payload of at most 65,535 bytes, CRC u16.
    public static let maximumFrameLength = 4 + Int(UInt16.max) + 2

    private enum State: Sendable {
        /// Between frames: only index 0 is welcome.
        case idle
        /// `buffer` holds the frame so far.
        case assembling(nextIndex: UInt8)
        /// After a drop: everything up to the next index 0 is ignored.
        case discarding
    }

    private var state = State.idle
    /// Kept apart from `state` so appending never copies the frame so far.
    private var buffer: [UInt8] = []
    public private(set) var droppedFrames = 0

    public init() {}

    /// The frame's bytes when `segment` is the final segment of one, otherwise nil.
    public mutating func append(_ segment: [UInt8]) -> [UInt8]? {
        guard let header = segment.first else {
            droppedFrames += 1
            return nil
        }
        let index = header & FrameSegmenter.indexMask
        let isFinal = header & FrameSegmenter.finalBit != 0

        switch state {
        case .assembling(let nextIndex) where index == nextIndex:
            break
        case .assembling:
            // A lost segment, or a new frame before this one ended: the frame in progress is gone either way.
            droppedFrames += 1
            guard index == 0 else {
                drop()
                return nil
            }
            buffer.removeAll(keepingCapacity: true)
        case .idle:
            guard index == 0 else {
                droppedFrames += 1
                drop()
                return nil
            }
        case .discarding:
            guard index == 0 else { return nil }
            buffer.removeAll(keepingCapacity: true)
        }

        guard buffer.count + segment.count - 1 <= Self.maximumFrameLength else {
            droppedFrames += 1
            drop()
            return nil
        }
        buffer.append(contentsOf: segment.dropFirst())
        guard isFinal else {
            state = .assembling(nextIndex: (index + 1) & FrameSegmenter.indexMask)
            return nil
        }
        state = .idle
        defer { buffer = [] }
        return buffer
    }

    /// The opcode and sequence number of the frame being reassembled, once its first segment carried them: whose
    /// answer is streaming in.
    public var frameInProgress: (opcode: UInt8, sequence: UInt8)? {
        guard case .assembling = state, buffer.count >= 2 else { return nil }
        return (buffer[0], buffer[1])
    }

    private mutating func drop() {
        state = .discarding
        buffer = []
    }
}
