import Wearables

/// Decodes `bytes` as a vendor layout and, when that works, checks the value survives encode → decode.
func checkLayout<Value: ByteLayout & Equatable>(_: Value.Type, _ bytes: [UInt8]) {
    guard let value = try? Value(whole: bytes) else { return }
    expectStable(value, { $0.wholeBytes }, { try Value(whole: $0) }, "\(Value.self)")
}

/// The vendor frame the bytes are (CRC and length checked), and the frame made of them as they are (opcode,
/// sequence, payload) so the message decoders behind the CRC are reached without the fuzzer forging one.
func vendorFrames(_ bytes: [UInt8]) -> [VendorFrame] {
    var frames: [VendorFrame] = []
    if let frame = try? VendorFrame(decoding: bytes) {
        precondition(frame.encoded() == bytes, "a vendor frame re-encodes differently")
        frames.append(frame)
    }
    if bytes.count >= 2, bytes.count - 2 <= Int(UInt16.max) {
        frames.append(VendorFrame(opcode: bytes[0], sequence: bytes[1], payload: Array(bytes.dropFirst(2))))
    }
    return frames
}

/// The frames a vendor target decodes messages from: the input as a frame, and the frames its segments reassemble to.
func allVendorFrames(_ bytes: [UInt8]) -> [VendorFrame] {
    vendorFrames(bytes) + reassembled(bytes).flatMap(vendorFrames)
}

/// Segments of the input as notifications (the first byte chooses the segment length) through a reassembler:
/// whatever comes out is one whole frame's bytes, which the frame decoder must take or refuse cleanly.
func reassembled(_ bytes: [UInt8]) -> [[UInt8]] {
    guard let first = bytes.first else { return [] }
    let length = Int(first % 24) + 1
    var reassembler = FrameReassembler()
    var frames: [[UInt8]] = []
    var start = 1
    while start < bytes.count {
        let end = min(bytes.count, start + length)
        if let frame = reassembler.append(Array(bytes[start..<end])) {
            precondition(frame.count <= FrameReassembler.maximumFrameLength, "a reassembled frame is too long")
            frames.append(frame)
        }
        start = end
    }
    return frames
}
