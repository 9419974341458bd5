#pragma once
// OpenSSL libcrypto: SHA-1, SHA-256, MD5, HMAC through EVP_MAC (HMAC-SHA1 on SHA_CTX), and signature
// verification (RSA, ECDSA P-256, Ed25519) on keys built with EVP_PKEY_fromdata (OpenSSL 3).
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/md5.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/param_build.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

// OSSL_PARAM_construct_utf8_string takes a non-const char* and keeps the pointer; these keep each
// digest name a compile-time constant on the C side instead of a Swift buffer that could dangle.
static inline OSSL_PARAM csslx_digest_param_sha1(void) {
    return OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA1", 0);
}
static inline OSSL_PARAM csslx_digest_param_sha256(void) {
    return OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0);
}
static inline OSSL_PARAM csslx_digest_param_md5(void) {
    return OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"MD5", 0);
}
static inline OSSL_PARAM csslx_param_end(void) {
    return OSSL_PARAM_construct_end();
}
// EVP_PKEY_PUBLIC_KEY is an OR of two other macros, which Swift does not import.
static inline int csslx_selection_public_key(void) {
    return EVP_PKEY_PUBLIC_KEY;
}
// OSSL_PARAM_BLD and EVP_PKEY_CTX_new_from_name keep the name pointers they are given (parameter
// keys, key types) beyond the call, so they must be static C strings, never Swift temporaries.
static inline int csslx_push_rsa_public(OSSL_PARAM_BLD *builder, const BIGNUM *n, const BIGNUM *e) {
    return OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_N, n)
        && OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_E, e);
}
// `point` (SEC 1 uncompressed, 65 bytes) must stay valid until OSSL_PARAM_BLD_to_param.
static inline int csslx_push_p256_public(OSSL_PARAM_BLD *builder, const unsigned char *point, size_t length) {
    return OSSL_PARAM_BLD_push_utf8_string(builder, OSSL_PKEY_PARAM_GROUP_NAME, "P-256", 0)
        && OSSL_PARAM_BLD_push_octet_string(builder, OSSL_PKEY_PARAM_PUB_KEY, point, length);
}
static inline EVP_PKEY_CTX *csslx_pkey_context_rsa(void) { return EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL); }
static inline EVP_PKEY_CTX *csslx_pkey_context_ec(void) { return EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL); }
static inline const char *csslx_digest_name_sha256(void) { return "SHA256"; }
// SHA-1's own context, for HMAC-SHA1 keys prepared once (NativeCrypto PreparedSHA1HMAC): each
// message copies the key's two 96-byte states, which EVP_MAC cannot offer. OpenSSL 3 deprecates
// these calls in favour of EVP (they remain in its API); the pragmas keep that to these wrappers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static inline int csslx_sha1_init(SHA_CTX *context) { return SHA1_Init(context); }
static inline int csslx_sha1_update(SHA_CTX *context, const void *data, size_t length) {
    return SHA1_Update(context, data, length);
}
static inline int csslx_sha1_final(unsigned char *digest, SHA_CTX *context) { return SHA1_Final(digest, context); }
#pragma GCC diagnostic pop
