import Crypto

/// Noise's CipherState (noiseprotocol.org/noise.html §5.1) with ChaChaPoly: a key and a message counter used as the
/// nonce (32 zero bits, then the counter as a little-endian 64-bit number). Without a key it passes bytes through,
/// as the handshake's first token needs. Pure; every message advances the counter, so each side keeps one per direction.
public struct NoiseCipherState: Sendable {
    static let tagLength = 16
    /// Raw bytes: Crypto's `SymmetricKey` is not `Sendable`, and a cipher state moves to the loop that uses it.
    private let keyBytes: [UInt8]?
    private(set) var nonce: UInt64 = 0

    init(key: [UInt8]? = nil) {
        keyBytes = key
    }

    private var key: SymmetricKey? { keyBytes.map { SymmetricKey(data: $0) } }

    var hasKey: Bool { keyBytes != nil }

    private func nonceBytes() -> ChaChaPoly.Nonce {
        var bytes = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 { bytes[4 + index] = UInt8(truncatingIfNeeded: nonce >> (8 * UInt64(index))) }
        // 12 bytes is ChaChaPoly's nonce length, so this cannot fail.
        return try! ChaChaPoly.Nonce(data: bytes)
    }

    /// `plaintext` sealed, its 16-byte tag appended; the counter advances.
    public mutating func encrypt(_ plaintext: [UInt8], associatedData: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard let key else { return plaintext }
        guard nonce != .max else { throw .nonceExhausted }
        // ChaChaPoly.seal fails only for a nonce or key of the wrong size, which these are not.
        let box = try! ChaChaPoly.seal(plaintext, using: key, nonce: nonceBytes(), authenticating: associatedData)
        nonce += 1
        return Array(box.ciphertext) + Array(box.tag)
    }

    /// `ciphertext` (with its tag) opened; the counter advances only when it authenticates.
    public mutating func decrypt(_ ciphertext: [UInt8], associatedData: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard let key else { return ciphertext }
        guard ciphertext.count >= Self.tagLength else { throw .malformed("a sealed message is at least its 16-byte tag") }
        guard nonce != .max else { throw .nonceExhausted }
        let split = ciphertext.count - Self.tagLength
        do {
            let box = try ChaChaPoly.SealedBox(nonce: nonceBytes(), ciphertext: ciphertext[..<split], tag: ciphertext[split...])
            let plaintext = try ChaChaPoly.open(box, using: key, authenticating: associatedData)
            nonce += 1
            return Array(plaintext)
        } catch {
            throw .authenticationFailed
        }
    }
}
