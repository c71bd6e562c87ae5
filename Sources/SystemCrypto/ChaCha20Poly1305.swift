import CTLS

/// ChaCha20-Poly1305 (RFC 8439) from the system's libcrypto: a 32-byte key, a 12-byte nonce, a 16-byte tag.
public enum ChaCha20Poly1305 {
    public static let keyLength = 32
    public static let nonceLength = 12
    public static let tagLength = 16

    /// Why a sealed message was not opened.
    public enum Failure: Error, Sendable {
        /// The tag does not match: a wrong key, nonce or associated data, or damaged bytes.
        case authenticationFailed
        /// A key, nonce or tag of the wrong length.
        case invalidParameters
    }

    /// `plaintext` encrypted, with its tag appended.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8] = []) throws(Failure) -> [UInt8] {
        let (ciphertext, tag) = try run(encrypting: true, plaintext, key: key, nonce: nonce, associatedData: associatedData, tag: nil)
        return ciphertext + tag
    }

    /// `ciphertext` (its tag last) decrypted, if the tag authenticates it.
    public static func open(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8] = []) throws(Failure) -> [UInt8] {
        guard sealed.count >= tagLength else { throw .invalidParameters }
        let split = sealed.count - tagLength
        return try run(encrypting: false, Array(sealed[..<split]), key: key, nonce: nonce, associatedData: associatedData,
                       tag: Array(sealed[split...])).output
    }

    private static func run(
        encrypting: Bool, _ input: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8], tag: [UInt8]?
    ) throws(Failure) -> (output: [UInt8], tag: [UInt8]) {
        guard key.count == keyLength, nonce.count == nonceLength else { throw .invalidParameters }
        guard let context = EVP_CIPHER_CTX_new() else { throw .invalidParameters }
        defer { EVP_CIPHER_CTX_free(context) }
        let direction: Int32 = encrypting ? 1 : 0
        guard EVP_CipherInit_ex(context, EVP_chacha20_poly1305(), nil, key, nonce, direction) == 1 else { throw .invalidParameters }
        var written: Int32 = 0
        if !associatedData.isEmpty {
            guard EVP_CipherUpdate(context, nil, &written, associatedData, Int32(associatedData.count)) == 1 else { throw .invalidParameters }
        }
        var output = [UInt8](repeating: 0, count: input.count + 16)
        var total = 0
        if !input.isEmpty {
            guard EVP_CipherUpdate(context, &output, &written, input, Int32(input.count)) == 1 else { throw .invalidParameters }
            total = Int(written)
        }
        if var tag {
            guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tagLength), &tag) == 1 else { throw .invalidParameters }
        }
        let finished = output.withUnsafeMutableBufferPointer { EVP_CipherFinal_ex(context, $0.baseAddress! + total, &written) }
        guard finished == 1 else { throw encrypting ? .invalidParameters : .authenticationFailed }
        total += Int(written)
        var producedTag: [UInt8] = []
        if encrypting {
            producedTag = [UInt8](repeating: 0, count: tagLength)
            guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(tagLength), &producedTag) == 1 else { throw .invalidParameters }
        }
        return (Array(output.prefix(total)), producedTag)
    }
}
