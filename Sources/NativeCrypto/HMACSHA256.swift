internal import CLibCrypto

/// One-shot HMAC-SHA256 (RFC 2104 over FIPS 180-4), the MAC of AWS Signature Version 4.
///
/// Through OpenSSL 3's `EVP_Q_mac`, which fetches the implementation on every call (~4 µs here,
/// DESIGN.md). SigV4 derives its signing key with four HMACs once per day and signs each S3
/// request with one more, next to a network round trip, so a prepared context would buy nothing.
/// (biz-identity adds a prepared `HMAC(.sha256, key:)`; once both are merged this becomes a thin
/// call to it.)
public enum HMACSHA256 {
    /// Length of an HMAC-SHA256 code in bytes.
    public static let byteCount = 32

    /// Returns the 32-byte HMAC-SHA256 of `message` under `key` (any length; empty is legal HMAC).
    public static func authenticationCode(for message: some Collection<UInt8>, key: some Collection<UInt8>) -> [UInt8] {
        // OpenSSL wants non-NULL pointers even for empty inputs: pass a 1-byte buffer, length 0.
        let keyBytes = Array(key), messageBytes = Array(message)
        let keyStorage = keyBytes.isEmpty ? [UInt8(0)] : keyBytes
        let messageStorage = messageBytes.isEmpty ? [UInt8(0)] : messageBytes
        return unsafe keyStorage.withUnsafeBytes { keyBuffer in
            unsafe messageStorage.withUnsafeBytes { messageBuffer in
                unsafe [UInt8](unsafeUninitializedCapacity: byteCount) { out, initialized in
                    var length = 0
                    let result = unsafe EVP_Q_mac(
                        nil, "HMAC", nil, "SHA256", nil,
                        keyBuffer.baseAddress, keyBytes.count,
                        messageBuffer.baseAddress?.assumingMemoryBound(to: UInt8.self), messageBytes.count,
                        out.baseAddress, byteCount, &length)
                    precondition(unsafe result != nil && length == byteCount, "EVP_Q_mac(HMAC-SHA256) failed")
                    initialized = length
                }
            }
        }
    }
}
