#if !canImport(CryptoKit)
internal import CLibCrypto

/// ``MACEngine`` on OpenSSL 3's `EVP_MAC`.
///
/// OpenSSL 3's one-shot `HMAC()` fetches the provider implementation on every call (~4 µs here);
/// an `EVP_MAC_CTX` initialised with the key once and duplicated per message costs ~1.5 µs
/// (DESIGN.md, measured). Thread safety: the prepared context is never mutated after `init`;
/// each call works on its own duplicate (`EVP_MAC_CTX_dup` only reads the source).
@safe final class OpenSSLMAC: MACEngine, @unchecked Sendable {
    private let byteCount: Int
    private let mac: OpaquePointer
    private let prepared: OpaquePointer

    init(_ algorithm: DigestAlgorithm, key: [UInt8]) {
        byteCount = algorithm.byteCount
        guard let mac = unsafe EVP_MAC_fetch(nil, "HMAC", nil) else { preconditionFailure("EVP_MAC_fetch(HMAC) failed") }
        guard let context = unsafe EVP_MAC_CTX_new(mac) else { preconditionFailure("EVP_MAC_CTX_new failed") }
        var params = unsafe [algorithm.macDigestParameter, csslx_param_end()]
        // OpenSSL wants a non-NULL pointer even for an empty key: pass a 1-byte buffer with length 0.
        let storage = key.isEmpty ? [UInt8(0)] : key
        let ok = unsafe storage.withUnsafeBufferPointer { buffer in
            unsafe params.withUnsafeMutableBufferPointer { params in
                unsafe EVP_MAC_init(context, buffer.baseAddress, key.count, params.baseAddress)
            }
        }
        precondition(ok == 1, "EVP_MAC_init(HMAC) failed")
        unsafe self.mac = mac
        unsafe self.prepared = context
    }

    deinit {
        unsafe EVP_MAC_CTX_free(prepared)
        unsafe EVP_MAC_free(mac)
    }

    func code(for buffer: UnsafeRawBufferPointer) -> [UInt8] {
        let context = unsafe duplicate()
        defer { unsafe EVP_MAC_CTX_free(context) }
        if buffer.count > 0 {
            precondition(unsafe EVP_MAC_update(context, buffer.baseAddress, buffer.count) == 1, "EVP_MAC_update failed")
        }
        return unsafe finish(context)
    }

    func code(forParts parts: [[UInt8]]) -> [UInt8] {
        let context = unsafe duplicate()
        defer { unsafe EVP_MAC_CTX_free(context) }
        for part in parts where !part.isEmpty {
            let ok = unsafe part.withUnsafeBytes { unsafe EVP_MAC_update(context, $0.baseAddress, $0.count) }
            precondition(ok == 1, "EVP_MAC_update failed")
        }
        return unsafe finish(context)
    }

    private func duplicate() -> OpaquePointer {
        guard let context = unsafe EVP_MAC_CTX_dup(prepared) else { preconditionFailure("EVP_MAC_CTX_dup failed") }
        return unsafe context
    }

    private func finish(_ context: OpaquePointer) -> [UInt8] {
        unsafe [UInt8](unsafeUninitializedCapacity: byteCount) { out, initialized in
            var length = 0
            precondition(unsafe EVP_MAC_final(context, out.baseAddress, &length, byteCount) == 1, "EVP_MAC_final failed")
            initialized = length
        }
    }
}

extension DigestAlgorithm {
    /// The `digest` parameter of `EVP_MAC_init` naming this algorithm (a static C string).
    var macDigestParameter: OSSL_PARAM {
        switch self {
        case .sha1: unsafe csslx_digest_param_sha1()
        case .sha256: unsafe csslx_digest_param_sha256()
        case .md5: unsafe csslx_digest_param_md5()
        }
    }
}
#endif
