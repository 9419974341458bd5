#if !canImport(CryptoKit)
internal import CLibCrypto

/// Why a key could not be built from its parts.
public struct PublicKeyError: Error, CustomStringConvertible, Equatable {
    /// What is wrong with the key material.
    public let description: String
    init(_ description: String) { self.description = description }
}

/// A public key that verifies signatures, held as an OpenSSL `EVP_PKEY`.
///
/// Built from the raw numbers a JWK carries (RFC 7518 §6: RSA `n`/`e`, EC P-256 `x`/`y`;
/// RFC 8037: Ed25519 `x`) with OpenSSL 3's `EVP_PKEY_fromdata`, never from PEM text. Each kind
/// verifies exactly one scheme, the one its JWS algorithm names, so a caller cannot ask an RSA
/// key for anything but RS256:
///
/// | kind | scheme | signature bytes |
/// |---|---|---|
/// | ``Kind/rsa`` | RSASSA-PKCS1-v1_5 with SHA-256 (RS256) | modulus-sized |
/// | ``Kind/p256`` | ECDSA P-256 with SHA-256 (ES256) | `r ‖ s`, 32 bytes each (RFC 7518 §3.4) |
/// | ``Kind/ed25519`` | Ed25519 (EdDSA, RFC 8032) | 64 |
///
/// Thread safety: an `EVP_PKEY` is only read after construction, and each verification uses
/// its own `EVP_MD_CTX`, so one instance serves all threads.
@safe public final class PublicKey: @unchecked Sendable {
    /// The key type, which fixes the signature scheme.
    public enum Kind: Sendable, Equatable {
        /// RSA; verifies RS256.
        case rsa
        /// ECDSA on NIST P-256; verifies ES256.
        case p256
        /// Ed25519; verifies EdDSA.
        case ed25519
    }

    /// The key type.
    public let kind: Kind
    /// Key size in bits (the RSA modulus; 256 for P-256 and Ed25519).
    public let bits: Int
    private let key: OpaquePointer

    private init(kind: Kind, key: OpaquePointer) {
        self.kind = kind
        unsafe self.key = key
        bits = Int(unsafe EVP_PKEY_get_bits(key))
    }

    deinit { unsafe EVP_PKEY_free(key) }

    /// An RSA public key from its modulus and public exponent, big-endian unsigned (leading zero
    /// bytes allowed, as base64url-decoded JWK `n` and `e` are).
    public static func rsa(modulus: [UInt8], exponent: [UInt8]) throws(PublicKeyError) -> PublicKey {
        let n = Array(modulus.drop { $0 == 0 }), e = Array(exponent.drop { $0 == 0 })
        guard !n.isEmpty, !e.isEmpty else { throw PublicKeyError("RSA modulus and exponent must be non-zero") }
        guard n.count <= 2048, e.count <= 8 else { throw PublicKeyError("RSA key too large") }
        guard let bnN = unsafe n.withUnsafeBufferPointer({ unsafe BN_bin2bn($0.baseAddress, Int32($0.count), nil) }),
              let bnE = unsafe e.withUnsafeBufferPointer({ unsafe BN_bin2bn($0.baseAddress, Int32($0.count), nil) })
        else { preconditionFailure("BN_bin2bn: out of memory") }
        defer {
            unsafe BN_free(bnN)
            unsafe BN_free(bnE)
        }
        return try unsafe build(kind: .rsa) { builder in unsafe csslx_push_rsa_public(builder, bnN, bnE) == 1 }
    }

    /// A P-256 public key from its affine coordinates, 32 bytes each, big-endian. A point that
    /// is not on the curve is refused.
    public static func p256(x: [UInt8], y: [UInt8]) throws(PublicKeyError) -> PublicKey {
        guard x.count == 32, y.count == 32 else { throw PublicKeyError("P-256 coordinates must be 32 bytes each") }
        let point: [UInt8] = [0x04] + x + y  // SEC 1 §2.3.3, uncompressed
        let built: Result<PublicKey, PublicKeyError> = unsafe point.withUnsafeBytes { point in
            Result { () throws(PublicKeyError) in
                try unsafe build(kind: .p256) { builder in
                    unsafe csslx_push_p256_public(builder, point.baseAddress, point.count) == 1
                }
            }
        }
        let key = try built.get()
        // fromdata decodes the point; the explicit check refuses anything off the curve.
        guard let check = unsafe EVP_PKEY_CTX_new_from_pkey(nil, key.key, nil) else { preconditionFailure("out of memory") }
        defer { unsafe EVP_PKEY_CTX_free(check) }
        guard unsafe EVP_PKEY_public_check(check) == 1 else {
            ERR_clear_error()
            throw PublicKeyError("the P-256 point is not on the curve")
        }
        return key
    }

    /// An Ed25519 public key from its 32 raw bytes (RFC 8032 §5.1.5).
    public static func ed25519(_ raw: [UInt8]) throws(PublicKeyError) -> PublicKey {
        guard raw.count == 32 else { throw PublicKeyError("an Ed25519 key is 32 bytes") }
        guard let key = unsafe raw.withUnsafeBufferPointer({
            unsafe EVP_PKEY_new_raw_public_key_ex(nil, "ED25519", nil, $0.baseAddress, $0.count)
        }) else {
            ERR_clear_error()
            throw PublicKeyError("not an Ed25519 public key")
        }
        return unsafe PublicKey(kind: .ed25519, key: key)
    }

    /// Runs `push` on a fresh parameter builder, then `EVP_PKEY_fromdata` with the result.
    private static func build(kind: Kind, push: (OpaquePointer) -> Bool) throws(PublicKeyError) -> PublicKey {
        guard let builder = unsafe OSSL_PARAM_BLD_new() else { preconditionFailure("OSSL_PARAM_BLD_new: out of memory") }
        defer { unsafe OSSL_PARAM_BLD_free(builder) }
        guard unsafe push(builder), let params = unsafe OSSL_PARAM_BLD_to_param(builder) else {
            preconditionFailure("OSSL_PARAM_BLD: out of memory")
        }
        defer { unsafe OSSL_PARAM_free(params) }
        guard let context = unsafe (kind == .rsa ? csslx_pkey_context_rsa() : csslx_pkey_context_ec()) else {
            preconditionFailure("EVP_PKEY_CTX_new_from_name(\(kind)) failed")
        }
        defer { unsafe EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard unsafe EVP_PKEY_fromdata_init(context) == 1,
              unsafe EVP_PKEY_fromdata(context, &key, csslx_selection_public_key(), params) == 1,
              let key = unsafe key
        else {
            ERR_clear_error()
            throw PublicKeyError("OpenSSL refused the \(kind == .rsa ? "RSA" : "EC") key parameters")
        }
        return unsafe PublicKey(kind: kind, key: key)
    }

    /// Whether `signature` is this key's signature of `message` under the key's one scheme (see
    /// the table above). Malformed signatures are simply not valid.
    public func isValidSignature(_ signature: [UInt8], for message: some Collection<UInt8>) -> Bool {
        let encoded: [UInt8]
        switch kind {
        case .p256:
            // JWS carries r ‖ s; OpenSSL verifies the DER SEQUENCE of the two INTEGERs.
            guard let der = ECDSASignature.der(fromRaw: signature, scalarBytes: 32) else { return false }
            encoded = der
        case .rsa, .ed25519:
            encoded = signature
        }
        let bytes = Array(message)
        guard let context = unsafe EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new: out of memory") }
        defer {
            unsafe EVP_MD_CTX_free(context)
            // A failed verification leaves reasons on this thread's error queue; nobody reads them.
            ERR_clear_error()
        }
        // Ed25519 hashes internally and takes no digest (RFC 8032 "pure" EdDSA).
        let initialized = kind == .ed25519
            ? unsafe EVP_DigestVerifyInit_ex(context, nil, nil, nil, nil, key, nil)
            : unsafe EVP_DigestVerifyInit_ex(context, nil, csslx_digest_name_sha256(), nil, nil, key, nil)
        guard initialized == 1 else { return false }
        let verified = unsafe encoded.withUnsafeBufferPointer { signature in
            unsafe bytes.withUnsafeBufferPointer { message in
                unsafe EVP_DigestVerify(context, signature.baseAddress, signature.count, message.baseAddress, message.count)
            }
        }
        return verified == 1
    }
}
#endif
