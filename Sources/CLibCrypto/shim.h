#pragma once
// OpenSSL libcrypto: SHA-1, SHA-256, MD5, HMAC-SHA1 through EVP_MAC (OpenSSL 3).
// No shims needed: everything used here imports as is.
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/md5.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

// OSSL_PARAM_construct_utf8_string takes a non-const char*; this keeps the digest name a
// compile-time constant on the C side instead of a mutable Swift buffer.
static inline OSSL_PARAM csslx_digest_param_sha1(void) {
    return OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA1", 0);
}
static inline OSSL_PARAM csslx_param_end(void) {
    return OSSL_PARAM_construct_end();
}
