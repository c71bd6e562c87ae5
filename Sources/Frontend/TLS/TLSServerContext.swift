import CTLS

/// The web interface's certificate chain and key (`frontend.tls`), loaded once at start: a missing file, a key that
/// is not the certificate's, or a certificate OpenSSL refuses stops the start with OpenSSL's reason and the key's
/// name. Each connection gets its own `TLSServerHandler` from it. TLS 1.2 and later, no renegotiation.
///
/// On the system's OpenSSL (libssl3), which the daemon already loads for the broker's TLS through libmosquitto: no
/// second TLS library in the binary (docs/decisions.md, "HTTPS on the system's OpenSSL").
public final class TLSServerContext: @unchecked Sendable {
    // @unchecked: the SSL_CTX is not changed after init, and OpenSSL lets several threads make connections
    // (SSL_new) from one context.
    let context: OpaquePointer

    public struct LoadError: Error, CustomStringConvertible {
        public let description: String
    }

    public init(certificateFile: String, keyFile: String) throws(LoadError) {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw LoadError(description: "frontend.tls: OpenSSL could not make a context: \(Self.lastError())")
        }
        guard wear2mqtt_tls_set_minimum_tls12(context) == 1 else {
            SSL_CTX_free(context)
            throw LoadError(description: "frontend.tls: OpenSSL refused TLS 1.2 as the minimum: \(Self.lastError())")
        }
        wear2mqtt_tls_no_renegotiation(context)
        guard SSL_CTX_use_certificate_chain_file(context, certificateFile) == 1 else {
            SSL_CTX_free(context)
            throw LoadError(description: "frontend.tls.cert_file: cannot use \(certificateFile) (PEM, the server's certificate first): \(Self.lastError())")
        }
        guard SSL_CTX_use_PrivateKey_file(context, keyFile, SSL_FILETYPE_PEM) == 1 else {
            SSL_CTX_free(context)
            throw LoadError(description: "frontend.tls.key_file: cannot use \(keyFile) (a PEM private key without a passphrase): \(Self.lastError())")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            SSL_CTX_free(context)
            throw LoadError(description: "frontend.tls.key_file: \(keyFile) is not the private key of \(certificateFile): \(Self.lastError())")
        }
        self.context = context
    }

    deinit { SSL_CTX_free(context) }

    /// OpenSSL's reason for the last failure on this thread, and its queue emptied.
    static func lastError() -> String {
        let code = ERR_get_error()
        defer { ERR_clear_error() }
        guard code != 0 else { return "no reason given" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
