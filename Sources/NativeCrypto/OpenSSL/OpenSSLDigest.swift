#if !canImport(CryptoKit)
internal import CLibCrypto

extension DigestAlgorithm {
    /// OpenSSL's table for this algorithm: static, owned by OpenSSL, never NULL, never freed.
    var evp: OpaquePointer {
        switch self {
        case .sha1: unsafe EVP_sha1()
        case .sha256: unsafe EVP_sha256()
        case .md5: unsafe EVP_md5()
        }
    }
}

/// ``DigestEngine`` on an OpenSSL `EVP_MD_CTX`.
@safe struct OpenSSLDigest: ~Copyable, DigestEngine {
    private let context: OpaquePointer
    private let byteCount: Int

    init(_ algorithm: DigestAlgorithm) {
        byteCount = algorithm.byteCount
        guard let context = unsafe EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new: out of memory") }
        precondition(unsafe EVP_DigestInit_ex(context, algorithm.evp, nil) == 1, "EVP_DigestInit_ex failed")
        unsafe self.context = context
    }

    deinit { unsafe EVP_MD_CTX_free(context) }

    mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard buffer.count > 0 else { return }
        precondition(unsafe EVP_DigestUpdate(context, buffer.baseAddress, buffer.count) == 1, "EVP_DigestUpdate failed")
    }

    consuming func finalize() -> [UInt8] {
        let ctx = unsafe context
        return unsafe [UInt8](unsafeUninitializedCapacity: byteCount) { out, initialized in
            var length: UInt32 = 0
            precondition(unsafe EVP_DigestFinal_ex(ctx, out.baseAddress, &length) == 1, "EVP_DigestFinal_ex failed")
            initialized = Int(length)
        }
    }
}

/// ``RandomEngine`` on OpenSSL's DRBG.
enum OpenSSLRandom: RandomEngine {
    static func bytes(_ count: Int) -> [UInt8] {
        unsafe [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            if count > 0 {
                precondition(unsafe RAND_bytes(out.baseAddress, Int32(count)) == 1, "RAND_bytes failed")
            }
            initialized = count
        }
    }
}
#endif
