#if !canImport(CryptoKit)
internal import CLibCrypto

extension DigestAlgorithm {
    /// OpenSSL's implementation of this algorithm, fetched once for the process.
    ///
    /// In OpenSSL 3 `EVP_sha256()` and its kin are only names: `EVP_DigestInit_ex` fetches the
    /// implementation again for every hash, ~2,300 instructions, 40% of hashing the API key on
    /// the token path. A fetched `EVP_MD` is immutable and reference-counted, so one serves all
    /// threads.
    var evp: OpaquePointer {
        switch self {
        case .sha1: unsafe FetchedDigest.sha1.pointer
        case .sha256: unsafe FetchedDigest.sha256.pointer
        case .md5: unsafe FetchedDigest.md5.pointer
        }
    }
}

/// An `EVP_MD` from `EVP_MD_fetch`, held for the life of the process (never freed), each
/// fetched on first use (a pointer is not Sendable; the object behind it is never mutated).
@safe private struct FetchedDigest: @unchecked Sendable {
    static let sha1 = FetchedDigest("SHA1")
    static let sha256 = FetchedDigest("SHA256")
    static let md5 = FetchedDigest("MD5")

    let pointer: OpaquePointer

    private init(_ name: String) {
        guard let digest = unsafe EVP_MD_fetch(nil, name, nil) else { preconditionFailure("EVP_MD_fetch(\(name)) failed") }
        unsafe pointer = digest
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
