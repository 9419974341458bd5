/// The one place NativeCrypto chooses its platform library.
///
/// ``Digest``, ``HMAC`` and ``SecureRandom`` are written once against these small engine
/// protocols; each platform supplies one implementation:
/// - Apple platforms (iOS, macOS, …): CryptoKit, part of every Apple SDK (no OpenSSL there);
/// - Linux: OpenSSL 3's EVP interface (`CLibCrypto`, a dependency on Linux only, Package.swift).
///
/// CRC-32 is zlib on every platform (zlib ships in every Apple SDK and in Debian), so it needs
/// no seam. The OpenSSL-only public-key verification (``PublicKey``) serves biz-server's JWTs
/// and exists on Linux only.

/// An incremental hash in progress. Noncopyable: a copy would share (OpenSSL) or fork (CryptoKit)
/// the state, and neither is what a caller of ``Digest`` means.
protocol DigestEngine: ~Copyable {
    /// Starts a hash of `algorithm`.
    init(_ algorithm: DigestAlgorithm)
    /// Adds the bytes in `buffer` (possibly empty).
    mutating func update(_ buffer: UnsafeRawBufferPointer)
    /// The digest of everything added (`algorithm.byteCount` bytes); ends the hash.
    consuming func finalize() -> [UInt8]
}

/// An HMAC key schedule prepared once; every call works on its own copy, so one engine serves
/// all threads.
protocol MACEngine: Sendable {
    /// Prepares HMAC with `algorithm` under `key` (any length, empty included).
    init(_ algorithm: DigestAlgorithm, key: [UInt8])
    /// The HMAC of the bytes in `buffer`.
    func code(for buffer: UnsafeRawBufferPointer) -> [UInt8]
    /// The HMAC of `parts` fed in order, as if concatenated.
    func code(forParts parts: [[UInt8]]) -> [UInt8]
}

/// Cryptographically strong random bytes.
protocol RandomEngine {
    /// `count` random bytes.
    static func bytes(_ count: Int) -> [UInt8]
}

#if canImport(CryptoKit)
typealias PlatformDigest = CryptoKitDigest
typealias PlatformMAC = CryptoKitMAC
typealias PlatformRandom = SystemRandom
#else
typealias PlatformDigest = OpenSSLDigest
typealias PlatformMAC = OpenSSLHMAC
typealias PlatformRandom = OpenSSLRandom
#endif
