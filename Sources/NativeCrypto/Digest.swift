/// The message digests Upgate uses (OpenSSL on Linux, CryptoKit on Apple platforms: `CryptoBackend.swift`).
///
/// SHA-1 is the etag's and the signatures' hash (qiniu-protocol.md §1, §7), SHA-256 hashes API keys
/// at rest, MD5 checks v2 `Content-MD5`.
public enum DigestAlgorithm: Sendable {
    /// SHA-1, 20 bytes.
    case sha1
    /// SHA-256, 32 bytes.
    case sha256
    /// MD5, 16 bytes.
    case md5

    /// Length of this algorithm's digest in bytes.
    public var byteCount: Int {
        switch self {
        case .sha1: 20
        case .sha256: 32
        case .md5: 16
        }
    }
}

/// An incremental hash: feed bytes as they arrive, read the digest at the end.
///
/// Used wherever data streams (a request body, a file read in pieces) so nothing is held whole in
/// memory. Not thread-safe: one hasher per stream.
public struct Digest: ~Copyable {
    private var engine: PlatformDigest
    /// The algorithm this hasher computes.
    public let algorithm: DigestAlgorithm

    /// Starts a new hash.
    public init(_ algorithm: DigestAlgorithm) {
        self.algorithm = algorithm
        engine = PlatformDigest(algorithm)
    }

    /// Adds `bytes` to the hash.
    public mutating func update(_ bytes: some Collection<UInt8>) {
        if bytes.withContiguousStorageIfAvailable({ unsafe engine.update(UnsafeRawBufferPointer($0)) }) == nil {
            unsafe Array(bytes).withUnsafeBytes { unsafe engine.update($0) }
        }
    }

    /// Returns the digest of everything added so far and ends the hash.
    public consuming func finalize() -> [UInt8] {
        engine.finalize()
    }

    /// Returns the digest of `bytes` in one call.
    public static func hash(_ bytes: some Collection<UInt8>, using algorithm: DigestAlgorithm) -> [UInt8] {
        var digest = Digest(algorithm)
        digest.update(bytes)
        return digest.finalize()
    }
}

/// SHA-1 (FIPS 180-1), as used by the Qiniu etag and signatures.
public enum SHA1 {
    /// Length of a SHA-1 digest in bytes.
    public static let byteCount = 20
    /// Returns the 20-byte SHA-1 digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] { Digest.hash(bytes, using: .sha1) }
}

/// SHA-256, used to store API keys as hashes only.
public enum SHA256 {
    /// Returns the 32-byte SHA-256 digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] { Digest.hash(bytes, using: .sha256) }
}

/// MD5, used only to check v2 `Content-MD5` headers (not for security).
public enum MD5 {
    /// Returns the 16-byte MD5 digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] { Digest.hash(bytes, using: .md5) }
}
