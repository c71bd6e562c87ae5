import SystemCrypto

/// Compares a presented token with the configured one in time that does not depend on where they differ, nor on
/// the configured token's length: both are hashed first, and the digests compared byte by byte to the end.
struct TokenCheck: Sendable {
    private let expected: [UInt8]

    init(_ token: Secret) {
        expected = Digest.sha256(Array(token.reveal().utf8))
    }

    func accepts(_ presented: String) -> Bool {
        let digest = Digest.sha256(Array(presented.utf8))
        var difference: UInt8 = 0
        for (a, b) in zip(digest, expected) { difference |= a ^ b }
        return difference == 0
    }
}
