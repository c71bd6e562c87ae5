// The system's OpenSSL (libssl3, already loaded for libmosquitto's TLS), for the web interface's HTTPS.
// Functions OpenSSL defines as macros are wrapped so Swift can call them.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/bio.h>

static inline int wear2mqtt_tls_set_minimum_tls12(SSL_CTX *context) {
    return (int)SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
}

static inline long wear2mqtt_tls_pending_output(BIO *bio) {
    return (long)BIO_ctrl_pending(bio);
}

static inline void wear2mqtt_tls_no_renegotiation(SSL_CTX *context) {
    SSL_CTX_set_options(context, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
}

// libcrypto's digests, MACs, ciphers and key agreement, for the SystemCrypto module.
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
