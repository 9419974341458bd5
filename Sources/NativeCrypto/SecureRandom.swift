internal import CLibCrypto

/// Cryptographically strong random bytes from OpenSSL's DRBG, for secrets (ctx keys, ids that
/// must not be guessable). Ordinary randomness uses Swift's `SystemRandomNumberGenerator`.
public enum SecureRandom {
    /// Returns `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0)
        return unsafe [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            if count > 0 {
                precondition(unsafe RAND_bytes(out.baseAddress, Int32(count)) == 1, "RAND_bytes failed")
            }
            initialized = count
        }
    }
}
