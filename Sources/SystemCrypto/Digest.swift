import CTLS

/// SHA-2 digests from the system's libcrypto.
public enum Digest {
    public static func sha256(_ data: [UInt8]) -> [UInt8] { digest(data, EVP_sha256(), length: 32) }
    public static func sha512(_ data: [UInt8]) -> [UInt8] { digest(data, EVP_sha512(), length: 64) }

    private static func digest(_ data: [UInt8], _ algorithm: OpaquePointer?, length: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: length)
        var written: UInt32 = 0
        // EVP_Digest fails only when out of memory.
        precondition(EVP_Digest(data, data.count, &output, &written, algorithm, nil) == 1, "EVP_Digest failed")
        return output
    }
}

/// HMAC-SHA256 (RFC 2104) and PBKDF2 over it (RFC 8018).
public enum HMACSHA256 {
    public static func authenticationCode(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var written: UInt32 = 0
        precondition(HMAC(EVP_sha256(), key, Int32(key.count), data, data.count, &output, &written) != nil, "HMAC failed")
        return output
    }

    /// PBKDF2-HMAC-SHA256: `length` bytes from `password` and `salt` after `rounds` iterations.
    public static func pbkdf2(password: [UInt8], salt: [UInt8], rounds: Int, length: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: length)
        let result = password.withUnsafeBufferPointer { password in
            password.withMemoryRebound(to: CChar.self) { password in
                PKCS5_PBKDF2_HMAC(password.baseAddress, Int32(password.count), salt, Int32(salt.count), Int32(rounds),
                                  EVP_sha256(), Int32(length), &output)
            }
        }
        precondition(result == 1, "PKCS5_PBKDF2_HMAC failed")
        return output
    }
}

/// Bytes from libcrypto's CSPRNG.
public func secureRandomBytes(_ count: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    precondition(RAND_bytes(&bytes, Int32(count)) == 1, "RAND_bytes failed")
    return bytes
}
