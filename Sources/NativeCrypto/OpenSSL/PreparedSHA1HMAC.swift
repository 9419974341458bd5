#if !canImport(CryptoKit)
internal import CLibCrypto

/// HMAC-SHA1 (RFC 2104) with the key's inner and outer SHA-1 states computed once: a message
/// copies the two states (96 bytes each), hashes, and finalizes, with no allocation, lock or
/// provider call. Every Qiniu signature is HMAC-SHA1 and a token request signs one; this is
/// ~1,600 instructions a message cheaper than a re-armed `EVP_MAC_CTX` (`OpenSSLMAC`).
///
/// Thread safety: the states are never mutated after `init`; every message works on copies.
@safe struct PreparedSHA1HMAC: @unchecked Sendable {
    private static let blockSize = 64
    private let inner: SHA_CTX
    private let outer: SHA_CTX

    /// Prepares HMAC-SHA1 under `key` (any length; a key longer than a block is hashed first).
    init(key: [UInt8]) {
        var block = key.count > Self.blockSize ? SHA1.hash(key) : key
        block += repeatElement(0, count: Self.blockSize - block.count)
        inner = Self.absorbing(block.map { $0 ^ 0x36 })
        outer = Self.absorbing(block.map { $0 ^ 0x5C })
    }

    /// A SHA-1 state that has taken in `pad` (one block).
    private static func absorbing(_ pad: [UInt8]) -> SHA_CTX {
        var context = SHA_CTX()
        precondition(unsafe csslx_sha1_init(&context) == 1, "SHA1_Init failed")
        let ok = unsafe pad.withUnsafeBytes { unsafe csslx_sha1_update(&context, $0.baseAddress, $0.count) }
        precondition(ok == 1, "SHA1_Update failed")
        return context
    }

    func code(for buffer: UnsafeRawBufferPointer) -> [UInt8] {
        var context = inner
        unsafe update(&context, buffer)
        return finish(&context)
    }

    func code(forParts parts: [[UInt8]]) -> [UInt8] {
        var context = inner
        for part in parts { unsafe part.withUnsafeBytes { unsafe update(&context, $0) } }
        return finish(&context)
    }

    private func update(_ context: inout SHA_CTX, _ buffer: UnsafeRawBufferPointer) {
        guard buffer.count > 0 else { return }
        precondition(unsafe csslx_sha1_update(&context, buffer.baseAddress, buffer.count) == 1, "SHA1_Update failed")
    }

    /// The inner hash, then the outer one over it, written into the same 20 bytes.
    private func finish(_ context: inout SHA_CTX) -> [UInt8] {
        unsafe [UInt8](unsafeUninitializedCapacity: SHA1.byteCount) { code, initialized in
            var outerContext = outer
            let ok = unsafe csslx_sha1_final(code.baseAddress, &context) == 1
                && csslx_sha1_update(&outerContext, code.baseAddress, SHA1.byteCount) == 1
                && csslx_sha1_final(code.baseAddress, &outerContext) == 1
            precondition(ok, "SHA-1 failed")
            initialized = SHA1.byteCount
        }
    }
}
#endif
