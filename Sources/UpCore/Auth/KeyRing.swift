public import NativeCrypto

/// AccessKey → prepared HMAC-SHA1 of its SecretKey, built once at startup.
///
/// Preparing an HMAC context costs more than using it (DESIGN.md: ~4 µs vs ~1.5 µs), so the
/// ring keeps one ``NativeCrypto/HMACSHA1`` per key and never stores the SecretKey text.
public struct KeyRing: Sendable {
    private let macs: [String: HMACSHA1]

    /// Builds the ring from AK → SK pairs (SecretKeys as UTF-8 bytes, as every SDK uses them).
    ///
    /// - Parameter secretKeys: AccessKey → SecretKey.
    public init(_ secretKeys: [String: String]) {
        var macs: [String: HMACSHA1] = [:]
        for (accessKey, secretKey) in secretKeys { macs[accessKey] = HMACSHA1(key: Array(secretKey.utf8)) }
        self.macs = macs
    }

    /// Builds the ring from already prepared MACs.
    ///
    /// - Parameter macs: AccessKey → HMAC under its SecretKey.
    public init(macs: [String: HMACSHA1]) {
        self.macs = macs
    }

    /// The prepared HMAC for `accessKey`, or `nil` when the key is unknown.
    ///
    /// - Parameter accessKey: The AccessKey as received.
    public func mac(for accessKey: some StringProtocol) -> HMACSHA1? {
        macs[String(accessKey)]
    }

    /// The AccessKeys in the ring, sorted.
    public var accessKeys: [String] { macs.keys.sorted() }
}
