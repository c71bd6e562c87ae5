/// The native API's encrypted framing: `0x01`, a 16-bit big-endian size, the frame — a handshake frame during the
/// handshake, a sealed message after it. Fed bytes as they arrive; answers whole frames.
public struct NoiseFrameDecoder: Sendable {
    public static let maximumFrame = Int(UInt16.max)
    private var buffer: [UInt8] = []
    private var start = 0

    public init() {}

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if start > 4096, start * 2 > buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole frame's bytes, nil until one has arrived.
    public mutating func next() throws(APIFrameError) -> [UInt8]? {
        guard buffer.count > start else { return nil }
        let preamble = buffer[start]
        guard preamble == 0x01 else { throw preamble == 0x00 ? .plaintextPeer : .badPreamble(preamble) }
        guard buffer.count - start >= 3 else { return nil }
        let size = Int(buffer[start + 1]) << 8 | Int(buffer[start + 2])
        guard buffer.count - start - 3 >= size else { return nil }
        let frame = Array(buffer[start + 3..<start + 3 + size])
        start += 3 + size
        return frame
    }

    /// A frame around `bytes`, which must fit in 65,535 bytes.
    public static func encode(_ bytes: [UInt8]) throws(APIFrameError) -> [UInt8] {
        guard bytes.count <= maximumFrame else { throw .tooLarge(bytes.count) }
        return [0x01, UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
    }
}

/// What a sealed frame holds once opened: the type and the payload's size as 16-bit big-endian numbers, the payload.
public enum NoiseMessageLayout {
    /// The largest payload: the frame holds the 4-byte header and the 16-byte tag too.
    public static let maximumPayload = NoiseFrameDecoder.maximumFrame - 4 - 16

    public static func encode(_ message: APIMessage) throws(APIFrameError) -> [UInt8] {
        guard message.payload.count <= maximumPayload else { throw .tooLarge(message.payload.count) }
        guard message.type <= UInt32(UInt16.max) else { throw .badVarint }
        let type = UInt16(message.type), size = UInt16(message.payload.count)
        return [UInt8(type >> 8), UInt8(type & 0xFF), UInt8(size >> 8), UInt8(size & 0xFF)] + message.payload
    }

    public static func decode(_ bytes: [UInt8]) throws(APIFrameError) -> APIMessage {
        guard bytes.count >= 4 else { throw .badInnerLength }
        let type = UInt32(bytes[0]) << 8 | UInt32(bytes[1])
        let size = Int(bytes[2]) << 8 | Int(bytes[3])
        guard bytes.count - 4 == size else { throw .badInnerLength }
        return APIMessage(type: type, payload: Array(bytes[4...]))
    }
}
