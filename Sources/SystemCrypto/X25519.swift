import CTLS

/// An X25519 private key (RFC 7748) for Diffie-Hellman key agreement, held as its 32 raw bytes so it is `Sendable`.
public struct X25519PrivateKey: Sendable {
    public static let keyLength = 32

    /// A key that cannot be used: the bytes are not 32, or the peer's public key gives no shared secret.
    public struct InvalidKey: Error, Sendable {}

    public let rawRepresentation: [UInt8]

    /// A fresh random key.
    public init() {
        rawRepresentation = secureRandomBytes(Self.keyLength)
    }

    public init(rawRepresentation: [UInt8]) throws(InvalidKey) {
        guard rawRepresentation.count == Self.keyLength else { throw InvalidKey() }
        self.rawRepresentation = rawRepresentation
    }

    /// The 32-byte public key.
    public var publicKey: [UInt8] {
        // 32 raw bytes always make an X25519 key.
        let key = try! Self.key(rawRepresentation, isPrivate: true)
        defer { EVP_PKEY_free(key) }
        var bytes = [UInt8](repeating: 0, count: Self.keyLength)
        var length = bytes.count
        precondition(EVP_PKEY_get_raw_public_key(key, &bytes, &length) == 1 && length == Self.keyLength)
        return bytes
    }

    /// The shared secret with the holder of `peerPublicKey`; fails for a key of the wrong size or one that gives the
    /// all-zero secret (a small-order point).
    public func sharedSecret(with peerPublicKey: [UInt8]) throws(InvalidKey) -> [UInt8] {
        guard peerPublicKey.count == Self.keyLength else { throw InvalidKey() }
        let privateKey = try Self.key(rawRepresentation, isPrivate: true)
        defer { EVP_PKEY_free(privateKey) }
        let peer = try Self.key(peerPublicKey, isPrivate: false)
        defer { EVP_PKEY_free(peer) }
        guard let context = EVP_PKEY_CTX_new(privateKey, nil) else { throw InvalidKey() }
        defer { EVP_PKEY_CTX_free(context) }
        var secret = [UInt8](repeating: 0, count: Self.keyLength)
        var length = secret.count
        guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, peer) == 1,
              EVP_PKEY_derive(context, &secret, &length) == 1, length == Self.keyLength,
              secret.contains(where: { $0 != 0 })
        else { throw InvalidKey() }
        return secret
    }

    private static func key(_ bytes: [UInt8], isPrivate: Bool) throws(InvalidKey) -> OpaquePointer {
        let key =
            isPrivate
            ? EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nil, bytes, bytes.count)
            : EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nil, bytes, bytes.count)
        guard let key else { throw InvalidKey() }
        return key
    }
}
