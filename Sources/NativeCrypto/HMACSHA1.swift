/// HMAC-SHA1 under one fixed key, prepared once and reused for every message: the MAC of every
/// Qiniu signature (qiniu-protocol.md §1, §3). A named ``HMAC`` so call sites say which one.
///
/// Token signing and callback verification sit on the request hot path, so keep one `HMACSHA1`
/// per secret key for the life of the process; one instance serves all threads (see ``HMAC``).
public final class HMACSHA1: Sendable {
    /// Length of an HMAC-SHA1 code in bytes.
    public static let byteCount = 20

    private let hmac: HMAC

    /// Prepares HMAC-SHA1 under `key`.
    public init(key: some Collection<UInt8>) {
        hmac = HMAC(.sha1, key: key)
    }

    /// Returns the 20-byte HMAC-SHA1 of `message`.
    public func authenticationCode(for message: some Collection<UInt8>) -> [UInt8] {
        hmac.authenticationCode(for: message)
    }

    /// Returns the HMAC-SHA1 of several pieces fed in order, as if concatenated.
    public func authenticationCode(forParts parts: [[UInt8]]) -> [UInt8] {
        hmac.authenticationCode(forParts: parts)
    }

    /// One-shot HMAC-SHA1 for cold paths (tests, tools). Hot paths keep an instance.
    public static func authenticationCode(for message: some Collection<UInt8>, key: some Collection<UInt8>) -> [UInt8] {
        HMACSHA1(key: key).authenticationCode(for: message)
    }
}
