internal import CLibCrypto

/// HMAC-SHA1 under one fixed key, prepared once and reused for every message.
///
/// OpenSSL 3's one-shot `HMAC()` fetches the provider implementation on every call (~4 µs here);
/// an `EVP_MAC_CTX` initialised with the key once and duplicated per message costs ~1.5 µs
/// (DESIGN.md, measured). Token signing and callback verification sit on the request hot path, so
/// keep one `HMACSHA1` per secret key for the life of the process.
///
/// Thread safety: the prepared context is never mutated after `init`; each call works on its own
/// duplicate (`EVP_MAC_CTX_dup` only reads the source), so one instance serves all threads.
@safe public final class HMACSHA1: @unchecked Sendable {
    /// Length of an HMAC-SHA1 code in bytes.
    public static let byteCount = 20

    private let mac: OpaquePointer
    private let prepared: OpaquePointer

    /// Prepares HMAC-SHA1 under `key`.
    public init(key: some Collection<UInt8>) {
        guard let mac = unsafe EVP_MAC_fetch(nil, "HMAC", nil) else { preconditionFailure("EVP_MAC_fetch(HMAC) failed") }
        guard let context = unsafe EVP_MAC_CTX_new(mac) else { preconditionFailure("EVP_MAC_CTX_new failed") }
        var params = unsafe [csslx_digest_param_sha1(), csslx_param_end()]
        let keyBytes = Array(key)
        // An empty key is legal HMAC; OpenSSL wants a non-NULL pointer, so pass a 1-byte buffer with length 0.
        let storage = keyBytes.isEmpty ? [UInt8(0)] : keyBytes
        let ok = unsafe storage.withUnsafeBufferPointer { buffer in
            unsafe params.withUnsafeMutableBufferPointer { params in
                unsafe EVP_MAC_init(context, buffer.baseAddress, keyBytes.count, params.baseAddress)
            }
        }
        precondition(ok == 1, "EVP_MAC_init(HMAC-SHA1) failed")
        unsafe self.mac = mac
        unsafe self.prepared = context
    }

    deinit {
        unsafe EVP_MAC_CTX_free(prepared)
        unsafe EVP_MAC_free(mac)
    }

    /// Returns the 20-byte HMAC-SHA1 of `message`.
    public func authenticationCode(for message: some Collection<UInt8>) -> [UInt8] {
        if let code = message.withContiguousStorageIfAvailable({ unsafe code(buffer: UnsafeRawBufferPointer($0)) }) {
            return code
        }
        return unsafe Array(message).withUnsafeBytes { unsafe code(buffer: $0) }
    }

    /// Returns the HMAC-SHA1 of several pieces fed in order, as if concatenated.
    ///
    /// Signing strings are built from parts (path, headers, body); feeding them separately avoids
    /// copying a large body into one buffer.
    public func authenticationCode(forParts parts: [[UInt8]]) -> [UInt8] {
        guard let context = unsafe EVP_MAC_CTX_dup(prepared) else { preconditionFailure("EVP_MAC_CTX_dup failed") }
        defer { unsafe EVP_MAC_CTX_free(context) }
        for part in parts where !part.isEmpty {
            let ok = unsafe part.withUnsafeBytes { unsafe EVP_MAC_update(context, $0.baseAddress, $0.count) }
            precondition(ok == 1, "EVP_MAC_update failed")
        }
        return unsafe Self.finish(context)
    }

    private func code(buffer: UnsafeRawBufferPointer) -> [UInt8] {
        guard let context = unsafe EVP_MAC_CTX_dup(prepared) else { preconditionFailure("EVP_MAC_CTX_dup failed") }
        defer { unsafe EVP_MAC_CTX_free(context) }
        if buffer.count > 0 {
            precondition(unsafe EVP_MAC_update(context, buffer.baseAddress, buffer.count) == 1, "EVP_MAC_update failed")
        }
        return unsafe Self.finish(context)
    }

    private static func finish(_ context: OpaquePointer) -> [UInt8] {
        unsafe [UInt8](unsafeUninitializedCapacity: byteCount) { out, initialized in
            var length = 0
            precondition(unsafe EVP_MAC_final(context, out.baseAddress, &length, byteCount) == 1, "EVP_MAC_final failed")
            initialized = length
        }
    }

    /// One-shot HMAC-SHA1 for cold paths (tests, tools). Hot paths keep an instance.
    public static func authenticationCode(for message: some Collection<UInt8>, key: some Collection<UInt8>) -> [UInt8] {
        HMACSHA1(key: key).authenticationCode(for: message)
    }
}
