import SystemCrypto

/// The proof of `AUTH_PROOF`: the first 16 bytes of HMAC-SHA256(key, nonce ‖ "GoFIT-auth"). Both sides compute
/// it, the host to answer a challenge, the band to check the answer; the key is what `PAIR_CONFIRM` returned.
public enum GoFITAuthentication {
    public static let proofLength = 16
    static let label = Array("GoFIT-auth".utf8)

    public static func proof(key: [UInt8], nonce: [UInt8]) -> [UInt8] {
        Array(HMACSHA256.authenticationCode(key: key, data: nonce + label).prefix(proofLength))
    }
}
