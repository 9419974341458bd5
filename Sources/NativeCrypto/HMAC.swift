/// HMAC (RFC 2104) under one fixed key and digest, prepared once and reused for every message.
///
/// Keep one instance per secret for the life of the process: preparing the key is the expensive
/// part on OpenSSL (see `OpenSSLMAC`). One instance serves all threads. The library underneath
/// is the platform's (`CryptoBackend.swift`).
public final class HMAC: Sendable {
    /// The digest underneath.
    public let algorithm: DigestAlgorithm

    private let engine: PlatformMAC

    /// Prepares HMAC with `algorithm` under `key` (any length; an empty key is legal HMAC).
    public init(_ algorithm: DigestAlgorithm, key: some Collection<UInt8>) {
        self.algorithm = algorithm
        engine = PlatformMAC(algorithm, key: Array(key))
    }

    /// Returns the HMAC of `message` (`algorithm.byteCount` bytes).
    public func authenticationCode(for message: some Collection<UInt8>) -> [UInt8] {
        if let code = message.withContiguousStorageIfAvailable({ unsafe engine.code(for: UnsafeRawBufferPointer($0)) }) {
            return code
        }
        return unsafe Array(message).withUnsafeBytes { unsafe engine.code(for: $0) }
    }

    /// Returns the HMAC of several pieces fed in order, as if concatenated.
    ///
    /// Signing strings are built from parts (path, headers, body); feeding them separately avoids
    /// copying a large body into one buffer.
    public func authenticationCode(forParts parts: [[UInt8]]) -> [UInt8] {
        engine.code(forParts: parts)
    }
}
