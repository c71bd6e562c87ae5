import SystemCrypto

/// PBKDF2 with HMAC-SHA256 (RFC 8018, section 5.2), for the one key the gateway derives: the fingerprint of the
/// credentials the broker accepted (`AcceptedCredentials`). libcrypto's `PKCS5_PBKDF2_HMAC` does the rounds.
enum PBKDF2 {
    /// `length` bytes (at most 32: one block is all the fingerprint needs) from `password` and `salt`.
    static func sha256(password: [UInt8], salt: [UInt8], rounds: Int, length: Int = 32) -> [UInt8] {
        precondition(rounds >= 1 && (1...32).contains(length))
        return HMACSHA256.pbkdf2(password: password, salt: salt, rounds: rounds, length: length)
    }
}
