import Crypto

/// PBKDF2 with HMAC-SHA256 (RFC 8018, section 5.2), for the one key the gateway derives: the fingerprint of the
/// credentials the broker accepted (`AcceptedCredentials`). Written here on swift-crypto's SHA-256 rather than taken
/// from `_CryptoExtras`, whose whole module a static release build would link for these few lines.
enum PBKDF2 {
    /// `length` bytes (at most 32: one block is all the fingerprint needs) from `password` and `salt`.
    static func sha256(password: [UInt8], salt: [UInt8], rounds: Int, length: Int = 32) -> [UInt8] {
        precondition(rounds >= 1 && (1...32).contains(length))
        // HMAC's two keyed hash states, made once (RFC 2104): each round then hashes only its 32-byte block.
        var key = password.count > 64 ? Array(SHA256.hash(data: password)) : password
        key += [UInt8](repeating: 0, count: 64 - key.count)
        var inner = SHA256()
        inner.update(data: key.map { $0 ^ 0x36 })
        var outer = SHA256()
        outer.update(data: key.map { $0 ^ 0x5C })
        func hmac(_ message: [UInt8]) -> [UInt8] {
            var innerHash = inner
            innerHash.update(data: message)
            var outerHash = outer
            outerHash.update(data: Array(innerHash.finalize()))
            return Array(outerHash.finalize())
        }
        var block = hmac(salt + [0, 0, 0, 1])
        var result = block
        for _ in 1..<rounds {
            block = hmac(block)
            for index in result.indices { result[index] ^= block[index] }
        }
        return Array(result.prefix(length))
    }
}
