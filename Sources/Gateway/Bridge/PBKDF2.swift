import Crypto

/// PBKDF2 with HMAC-SHA256 (RFC 8018, section 5.2), for the one key the gateway derives: the fingerprint of the
/// credentials the broker accepted (`AcceptedCredentials`). Written here on swift-crypto's HMAC rather than taken
/// from `_CryptoExtras`, whose whole module a static release build would link for these few lines.
enum PBKDF2 {
    /// `length` bytes (at most 32: one block is all the fingerprint needs) from `password` and `salt`.
    static func sha256(password: [UInt8], salt: [UInt8], rounds: Int, length: Int = 32) -> [UInt8] {
        precondition(rounds >= 1 && (1...32).contains(length))
        let key = SymmetricKey(data: password)
        var block = Array(HMAC<SHA256>.authenticationCode(for: salt + [0, 0, 0, 1], using: key))
        var result = block
        for _ in 1..<rounds {
            block = Array(HMAC<SHA256>.authenticationCode(for: block, using: key))
            for index in result.indices { result[index] ^= block[index] }
        }
        return Array(result.prefix(length))
    }
}
