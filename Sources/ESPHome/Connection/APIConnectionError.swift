/// Why a native-API connection ended, in the words a user can act on.
public enum APIConnectionError: Error, Equatable, Sendable, CustomStringConvertible {
    case frame(APIFrameError)
    case noise(NoiseError)
    /// The proxy has `api.encryption` and this side has no key for it.
    case requiresEncryption
    /// This side has a key and the proxy none.
    case proxyHasNoKey
    /// The proxy refused the key (`Handshake MAC failure`).
    case wrongKey
    case handshakeFailed(String)
    /// The proxy answered with another name than the one configured.
    case nameMismatch(expected: String, got: String)
    case incompatibleVersion(major: UInt32, minor: UInt32)
    /// A message that could not be decoded, or that came when it could not.
    case protocolViolation(String)
    /// The other side asked to disconnect.
    case disconnectedByPeer

    public var description: String {
        switch self {
        case .frame(.requiresEncryption), .requiresEncryption:
            "the proxy requires encryption: set its api.encryption.key in the radio's key"
        case .frame(.plaintextPeer), .proxyHasNoKey:
            "the proxy has no encryption key set: remove the radio's key, or set api.encryption.key on the proxy"
        case .frame(let error): "bad frame: \(error)"
        case .noise(.authenticationFailed), .wrongKey: "the proxy refused the encryption key (Handshake MAC failure)"
        case .noise(let error): "encryption: \(error)"
        case .handshakeFailed(let reason): "handshake failed: \(reason)"
        case .nameMismatch(let expected, let got): "the proxy is called \(got), not \(expected)"
        case .incompatibleVersion(let major, let minor): "the proxy speaks API \(major).\(minor); this client speaks 1.x"
        case .protocolViolation(let what): "protocol violation: \(what)"
        case .disconnectedByPeer: "the other side disconnected"
        }
    }
}
