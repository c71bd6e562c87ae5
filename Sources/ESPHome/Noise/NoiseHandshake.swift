import SystemCrypto

/// The handshake ESPHome's native API encrypts with: `Noise_NNpsk0_25519_ChaChaPoly_SHA256`, prologue
/// `NoiseAPIInit\0\0`, the device's 32-byte `api.encryption.key` as the pre-shared key. Two messages —
/// `-> psk, e` and `<- e, ee` — then a cipher per direction (`NoiseTransport`).
///
/// Both roles, so the gateway (initiator) and the simulated proxy (responder) share it. Pure: the ephemeral key is
/// injectable, and the published test vectors (cacophony) check every byte.
public struct NoiseHandshake: Sendable {
    public enum Role: Sendable { case initiator, responder }

    public static let protocolName = "Noise_NNpsk0_25519_ChaChaPoly_SHA256"
    /// What ESPHome mixes in before the first message.
    public static let esphomePrologue = Array("NoiseAPIInit".utf8) + [0, 0]
    public static let keyLength = 32

    public let role: Role
    private var symmetric: NoiseSymmetricState
    private let preSharedKey: [UInt8]
    /// Raw keys: Crypto's key types are not `Sendable`.
    private let ephemeralKey: [UInt8]
    private var remoteEphemeral: [UInt8]?
    /// Messages written or read so far (0, 1, 2); `failed` after a refusal, which ends the handshake.
    private var messages = 0
    private var failed = false

    /// - Parameters:
    ///   - preSharedKey: 32 bytes (`ESPHomeEncryptionKey` reads the base64 form).
    ///   - ephemeral: a fresh key unless a test fixes it.
    public init(role: Role, preSharedKey: [UInt8], prologue: [UInt8] = esphomePrologue,
                ephemeral: X25519PrivateKey = .init()) throws(NoiseError) {
        guard preSharedKey.count == Self.keyLength else { throw .malformed("the pre-shared key is \(preSharedKey.count) bytes, not 32") }
        self.role = role
        self.preSharedKey = preSharedKey
        ephemeralKey = ephemeral.rawRepresentation
        symmetric = NoiseSymmetricState(protocolName: Self.protocolName)
        symmetric.mixHash(prologue)
    }

    public var isComplete: Bool { messages == 2 && !failed }
    /// The transcript's hash, the same on both sides once complete (channel binding).
    public var handshakeHash: [UInt8] { symmetric.handshakeHash }

    /// The next message of this side, carrying `payload` (ESPHome sends none).
    public mutating func writeMessage(_ payload: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        switch (role, messages, failed) {
        case (.initiator, 0, false):
            symmetric.mixKeyAndHash(preSharedKey)
            let message = writeEphemeral()
            return try finish(message + symmetric.encryptAndHash(payload))
        case (.responder, 1, false):
            let message = writeEphemeral()
            try mixSharedSecret()
            return try finish(message + symmetric.encryptAndHash(payload))
        default:
            throw .outOfOrder("the \(role) has no message to write now")
        }
    }

    /// The other side's next message; answers its payload.
    public mutating func readMessage(_ message: [UInt8]) throws(NoiseError) -> [UInt8] {
        guard !failed, (role == .responder && messages == 0) || (role == .initiator && messages == 1) else {
            throw .outOfOrder("the \(role) expects no message now")
        }
        guard message.count >= Self.keyLength + NoiseCipherState.tagLength else {
            failed = true
            throw .malformed("a handshake message is at least 48 bytes, got \(message.count)")
        }
        if role == .responder { symmetric.mixKeyAndHash(preSharedKey) }
        let publicKey = Array(message[..<Self.keyLength])
        remoteEphemeral = publicKey
        symmetric.mixHash(publicKey)
        symmetric.mixKey(publicKey)
        do {
            if role == .initiator { try mixSharedSecret() }
            let payload = try symmetric.decryptAndHash(Array(message[Self.keyLength...]))
            messages += 1
            return payload
        } catch {
            failed = true
            throw error
        }
    }

    /// The ciphers for the session, once the handshake is complete.
    public func transport() throws(NoiseError) -> NoiseTransport {
        guard isComplete else { throw .outOfOrder("the handshake is not complete") }
        let (initiatorToResponder, responderToInitiator) = symmetric.split()
        return role == .initiator
            ? NoiseTransport(sending: initiatorToResponder, receiving: responderToInitiator)
            : NoiseTransport(sending: responderToInitiator, receiving: initiatorToResponder)
    }

    /// The `e` token written: the public key in clear, mixed into the hash and (psk mode) the key.
    private mutating func writeEphemeral() -> [UInt8] {
        // The bytes came from a private key, so they make one again.
        let publicKey = try! X25519PrivateKey(rawRepresentation: ephemeralKey).publicKey
        symmetric.mixHash(publicKey)
        symmetric.mixKey(publicKey)
        return publicKey
    }

    /// The `ee` token.
    private mutating func mixSharedSecret() throws(NoiseError) {
        guard let remoteEphemeral else { throw .outOfOrder("no remote ephemeral key yet") }
        do {
            let ephemeral = try X25519PrivateKey(rawRepresentation: ephemeralKey)
            symmetric.mixKey(try ephemeral.sharedSecret(with: remoteEphemeral))
        } catch {
            failed = true
            throw .malformed("no shared secret with that public key")
        }
    }

    private mutating func finish(_ message: [UInt8]) -> [UInt8] {
        messages += 1
        return message
    }
}

/// A finished handshake's two ciphers: one for what this side sends, one for what it receives.
public struct NoiseTransport: Sendable {
    public var sending: NoiseCipherState
    public var receiving: NoiseCipherState
}
