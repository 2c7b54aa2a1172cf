// SPDX-License-Identifier: GPL-3.0-or-later
// OpenSSL (libssl) for TLS connections of network sources, and libcrypto's EVP ciphers for
// HLS AES-128 segments. Functions for the macros Swift cannot import.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <openssl/evp.h>

static inline long tonearm_ssl_set_sni(SSL *ssl, const char *host) {
    return SSL_set_tlsext_host_name(ssl, host);
}

static inline int tonearm_ssl_set_min_tls12(SSL_CTX *ctx) {
    return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}
