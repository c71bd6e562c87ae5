import SystemCrypto

/// Noise's CipherState (noiseprotocol.org/noise.html §5.1) with ChaChaPoly: a key and a message counter used as the
/// nonce (32 zero bits, then the counter as a little-endian 64-bit number). Without a key it passes bytes through,
/// as the handshake's first token needs. Pure; every message advances the counter, so each side keeps one per direction.
public struct NoiseCipherState: Sendable {
    static let tagLength = 16
    /// Raw bytes, so the state is `Sendable`: a cipher state moves to the loop that uses it.
    private let keyBytes: [UInt8]?
    private(set) var nonce: UInt64 = 0

    init(key: [UInt8]? = nil) {
        keyBytes = key
    }

    var hasKey: Bool { keyBytes != nil }

    private func nonceBytes() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 { bytes[4 + index] = UInt8(truncatingIfNeeded: nonce >> (8 * UInt64(index))) }
        return bytes
    }

    /// `plaintext` sealed, its 16-byte tag appended; the counter advances.
    public mutating func encrypt(_ plaintext: [UInt8], associatedData: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard let key = keyBytes else { return plaintext }
        guard nonce != .max else { throw .nonceExhausted }
        // Sealing fails only for a nonce or key of the wrong size, which these are not.
        let sealed = try! ChaCha20Poly1305.seal(plaintext, key: key, nonce: nonceBytes(), associatedData: associatedData)
        nonce += 1
        return sealed
    }

    /// `ciphertext` (with its tag) opened; the counter advances only when it authenticates.
    public mutating func decrypt(_ ciphertext: [UInt8], associatedData: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard let key = keyBytes else { return ciphertext }
        guard ciphertext.count >= Self.tagLength else { throw .malformed("a sealed message is at least its 16-byte tag") }
        guard nonce != .max else { throw .nonceExhausted }
        do {
            let plaintext = try ChaCha20Poly1305.open(ciphertext, key: key, nonce: nonceBytes(), associatedData: associatedData)
            nonce += 1
            return plaintext
        } catch {
            throw .authenticationFailed
        }
    }
}
