/// The native API's plaintext framing: `0x00`, the payload's length and the message type as varints, the payload.
/// The decoder is fed bytes as they arrive and answers whole messages; a partial frame waits in it.
public struct PlaintextFrameDecoder: Sendable {
    /// Larger frames end the connection (a proxy's messages are a few KiB; this bounds what a broken peer costs).
    public static let defaultMaximumPayload = 256 * 1024
    private let maximumPayload: Int
    private var buffer: [UInt8] = []
    private var start = 0

    public init(maximumPayload: Int = defaultMaximumPayload) {
        self.maximumPayload = maximumPayload
    }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if start > 4096, start * 2 > buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole message, nil until one has arrived.
    public mutating func next() throws(APIFrameError) -> APIMessage? {
        let pending = buffer[start...]
        guard let preamble = pending.first else { return nil }
        guard preamble == 0x00 else { throw preamble == 0x01 ? .requiresEncryption : .badPreamble(preamble) }
        guard let (length, lengthBytes) = try VarUInt.decode(pending.dropFirst()) else { return nil }
        guard Int(length) <= maximumPayload else { throw .tooLarge(Int(length)) }
        guard let (type, typeBytes) = try VarUInt.decode(pending.dropFirst(1 + lengthBytes)) else { return nil }
        let payloadStart = pending.startIndex + 1 + lengthBytes + typeBytes
        guard buffer.count - payloadStart >= Int(length) else { return nil }
        let payload = Array(buffer[payloadStart..<payloadStart + Int(length)])
        start = payloadStart + Int(length)
        return APIMessage(type: type, payload: payload)
    }

    public static func encode(_ message: APIMessage) -> [UInt8] {
        [0x00] + VarUInt.encode(UInt32(message.payload.count)) + VarUInt.encode(message.type) + message.payload
    }
}
