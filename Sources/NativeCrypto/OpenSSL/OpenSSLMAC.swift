#if !canImport(CryptoKit)
internal import CLibCrypto
import Synchronization

/// ``MACEngine`` on OpenSSL: HMAC-SHA1, the MAC of every Qiniu signature, on SHA-1 states
/// prepared once per key (``PreparedSHA1HMAC``); the other digests on `EVP_MAC` (``OpenSSLMAC``).
enum OpenSSLHMAC: MACEngine {
    case sha1(PreparedSHA1HMAC)
    case evp(OpenSSLMAC)

    init(_ algorithm: DigestAlgorithm, key: [UInt8]) {
        self = algorithm == .sha1 ? .sha1(PreparedSHA1HMAC(key: key)) : .evp(OpenSSLMAC(algorithm, key: key))
    }

    func code(for buffer: UnsafeRawBufferPointer) -> [UInt8] {
        switch self {
        case .sha1(let prepared): unsafe prepared.code(for: buffer)
        case .evp(let mac): unsafe mac.code(for: buffer)
        }
    }

    func code(forParts parts: [[UInt8]]) -> [UInt8] {
        switch self {
        case .sha1(let prepared): prepared.code(forParts: parts)
        case .evp(let mac): mac.code(forParts: parts)
        }
    }
}

/// ``MACEngine`` on OpenSSL 3's `EVP_MAC`.
///
/// OpenSSL 3's one-shot `HMAC()` fetches the provider implementation on every call (~4 µs here);
/// an `EVP_MAC_CTX` initialised with the key once and duplicated per message costs ~1.5 µs
/// (DESIGN.md, measured). Thread safety: the prepared context is never mutated after `init`;
/// each call works on its own duplicate (`EVP_MAC_CTX_dup` only reads the source).
///
/// Duplicates are kept for reuse: a finished one is re-armed with `EVP_MAC_init(ctx, NULL, 0,
/// NULL)`, which restarts HMAC under the key it already holds (OpenSSL's `hmac_init` with no
/// key), and goes back to a small free list. That saves the allocation and freeing of three
/// digest contexts per message (webhook and S3 signatures take one each). At most `maxSpare`
/// are kept, about one per thread that signs at once.
@safe final class OpenSSLMAC: MACEngine, @unchecked Sendable {
    private let byteCount: Int
    private let mac: OpaquePointer
    private let prepared: OpaquePointer
    private let spare = Mutex<[SpareContext]>([])
    private static let maxSpare = 16

    /// A context owned by the free list (a pointer is not Sendable; the list hands each to one
    /// caller at a time).
    @safe private struct SpareContext: @unchecked Sendable {
        let pointer: OpaquePointer
    }

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
        for context in spare.withLock({ $0 }) { unsafe EVP_MAC_CTX_free(context.pointer) }
        unsafe EVP_MAC_CTX_free(prepared)
        unsafe EVP_MAC_free(mac)
    }

    func code(for buffer: UnsafeRawBufferPointer) -> [UInt8] {
        let context = unsafe take()
        defer { unsafe give(context) }
        if buffer.count > 0 {
            precondition(unsafe EVP_MAC_update(context, buffer.baseAddress, buffer.count) == 1, "EVP_MAC_update failed")
        }
        return unsafe finish(context)
    }

    func code(forParts parts: [[UInt8]]) -> [UInt8] {
        let context = unsafe take()
        defer { unsafe give(context) }
        for part in parts where !part.isEmpty {
            let ok = unsafe part.withUnsafeBytes { unsafe EVP_MAC_update(context, $0.baseAddress, $0.count) }
            precondition(ok == 1, "EVP_MAC_update failed")
        }
        return unsafe finish(context)
    }

    /// A context ready for a message under the key: a spare one, else a new duplicate.
    private func take() -> OpaquePointer {
        if let context = spare.withLock({ $0.popLast() }) { return unsafe context.pointer }
        return unsafe duplicate()
    }

    /// Re-arms a finished context and keeps it, or frees it when the list is full (or re-arming
    /// fails: then the next message gets a fresh duplicate).
    private func give(_ context: OpaquePointer) {
        if unsafe EVP_MAC_init(context, nil, 0, nil) == 1 {
            let kept = spare.withLock { list in
                guard list.count < Self.maxSpare else { return false }
                unsafe list.append(SpareContext(pointer: context))
                return true
            }
            if kept { return }
        }
        unsafe EVP_MAC_CTX_free(context)
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
