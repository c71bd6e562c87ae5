/// Messages to bytes and bytes to messages for an established native-API session: plaintext frames, or Noise frames
/// sealed with the session's ciphers. Shared by the client and the server state machines.
struct APITransport: Sendable {
    private enum Framing: Sendable {
        case plaintext(PlaintextFrameDecoder)
        case noise(NoiseFrameDecoder, NoiseTransport)
    }

    private var framing: Framing

    static func plaintext(_ decoder: PlaintextFrameDecoder = PlaintextFrameDecoder()) -> Self {
        Self(framing: .plaintext(decoder))
    }

    /// Noise, continuing `decoder` (bytes after the handshake may already wait in it).
    static func noise(_ decoder: NoiseFrameDecoder, _ transport: NoiseTransport) -> Self {
        Self(framing: .noise(decoder, transport))
    }

    mutating func append(_ bytes: [UInt8]) {
        switch framing {
        case .plaintext(var decoder):
            decoder.append(bytes)
            framing = .plaintext(decoder)
        case .noise(var decoder, let transport):
            decoder.append(bytes)
            framing = .noise(decoder, transport)
        }
    }

    mutating func next() throws(APIConnectionError) -> APIMessage? {
        do {
            switch framing {
            case .plaintext(var decoder):
                defer { framing = .plaintext(decoder) }
                return try decoder.next()
            case .noise(var decoder, var transport):
                defer { framing = .noise(decoder, transport) }
                guard let frame = try decoder.next() else { return nil }
                return try NoiseMessageLayout.decode(transport.receiving.decrypt(frame))
            }
        } catch {
            throw Self.connectionError(error)
        }
    }

    mutating func encode(_ message: APIMessage) throws(APIConnectionError) -> [UInt8] {
        do {
            switch framing {
            case .plaintext:
                return PlaintextFrameDecoder.encode(message)
            case .noise(let decoder, var transport):
                defer { framing = .noise(decoder, transport) }
                return try NoiseFrameDecoder.encode(transport.sending.encrypt(NoiseMessageLayout.encode(message)))
            }
        } catch {
            throw Self.connectionError(error)
        }
    }

    private static func connectionError(_ error: any Error) -> APIConnectionError {
        switch error {
        case let error as APIFrameError: .frame(error)
        case let error as NoiseError: .noise(error)
        default: .protocolViolation("\(error)")
        }
    }
}
