import SystemCrypto

/// The Noise Protocol Framework's SymmetricState (noiseprotocol.org/noise.html §5.2) for the one suite ESPHome's native
/// API speaks, `25519_ChaChaPoly_SHA256`: the chaining key, the handshake hash and the cipher key they produce.
/// Pure: what goes in decides what comes out, so the published test vectors check it byte for byte.
struct NoiseSymmetricState {
    static let hashLength = 32
    private(set) var chainingKey: [UInt8]
    private(set) var handshakeHash: [UInt8]
    private(set) var cipher = NoiseCipherState()

    init(protocolName: String) {
        let name = Array(protocolName.utf8)
        handshakeHash = name.count <= Self.hashLength
            ? name + [UInt8](repeating: 0, count: Self.hashLength - name.count)
            : Self.hash(name)
        chainingKey = handshakeHash
    }

    mutating func mixHash(_ data: [UInt8]) {
        handshakeHash = Self.hash(handshakeHash + data)
    }

    mutating func mixKey(_ inputKeyMaterial: [UInt8]) {
        let outputs = Self.hkdf(chainingKey: chainingKey, inputKeyMaterial, count: 2)
        chainingKey = outputs[0]
        cipher = NoiseCipherState(key: outputs[1])
    }

    /// The `psk` token.
    mutating func mixKeyAndHash(_ inputKeyMaterial: [UInt8]) {
        let outputs = Self.hkdf(chainingKey: chainingKey, inputKeyMaterial, count: 3)
        chainingKey = outputs[0]
        mixHash(outputs[1])
        cipher = NoiseCipherState(key: outputs[2])
    }

    mutating func encryptAndHash(_ plaintext: [UInt8]) throws(NoiseError) -> [UInt8] {
        let ciphertext = try cipher.encrypt(plaintext, associatedData: handshakeHash)
        mixHash(ciphertext)
        return ciphertext
    }

    mutating func decryptAndHash(_ ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] {
        let plaintext = try cipher.decrypt(ciphertext, associatedData: handshakeHash)
        mixHash(ciphertext)
        return plaintext
    }

    /// The two transport ciphers: initiator to responder first.
    func split() -> (NoiseCipherState, NoiseCipherState) {
        let outputs = Self.hkdf(chainingKey: chainingKey, [], count: 2)
        return (NoiseCipherState(key: outputs[0]), NoiseCipherState(key: outputs[1]))
    }

    static func hash(_ data: [UInt8]) -> [UInt8] { Digest.sha256(data) }

    static func hmac(key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        HMACSHA256.authenticationCode(key: key, data: data)
    }

    /// Noise's HKDF (§4.3): two or three outputs of HMAC-SHA256 chained from one extracted key.
    static func hkdf(chainingKey: [UInt8], _ inputKeyMaterial: [UInt8], count: Int) -> [[UInt8]] {
        let temporaryKey = hmac(key: chainingKey, inputKeyMaterial)
        var outputs: [[UInt8]] = []
        var previous: [UInt8] = []
        for index in 1...count {
            previous = hmac(key: temporaryKey, previous + [UInt8(index)])
            outputs.append(previous)
        }
        return outputs
    }
}

/// Why a Noise message was refused.
public enum NoiseError: Error, Equatable, Sendable {
    /// The authentication tag does not match: a wrong key (the PSK, during the handshake) or a damaged message.
    case authenticationFailed
    /// A message of the wrong length for where the handshake is.
    case malformed(String)
    /// The nonce would wrap (2^64 - 1 messages): the session must end.
    case nonceExhausted
    /// A call the handshake's state does not allow (a second first message, transport before the end).
    case outOfOrder(String)
}
