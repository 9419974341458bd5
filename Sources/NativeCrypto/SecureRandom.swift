/// Cryptographically strong random bytes, for secrets (ctx keys, ids that must not be guessable):
/// OpenSSL's DRBG on Linux, the system CSPRNG on Apple platforms (`CryptoBackend.swift`).
/// Ordinary randomness uses Swift's `SystemRandomNumberGenerator`.
public enum SecureRandom {
    /// Returns `count` random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0)
        return PlatformRandom.bytes(count)
    }
}
