import NativeCrypto

/// A new API key and its id, as `biz-server keys create` and `POST /v1/admin/keys` make them.
///
/// The key is `upk_` and 48 lower-case hex digits: 192 bits from `SecureRandom` (issue 11 §3 asks
/// for at least 128), so guessing one is hopeless and storing only its SHA-256 is enough — a
/// fast hash suffices for a secret with that much entropy (unlike a password). The prefix makes a
/// leaked key recognisable to secret scanners and to people, and tells it apart from a JWT
/// (`TokenController`): hex has no dots.
struct IssuedAPIKey: Sendable {
    /// Prefix of every issued key.
    static let prefix = "upk_"
    /// Prefix of every stored key's id.
    static let idPrefix = "key_"

    /// The public id: `key_`, 12 hex digits of the creation time in Unix milliseconds, 12 random
    /// ones. Not secret; unique (48 random bits per millisecond, and the store refuses a repeat),
    /// and in creation order as text, so keys created within one second still list oldest first.
    let id: String
    /// The key; shown once, never stored.
    let key: String

    /// A fresh id and key for a key created at `milliseconds` (Unix time).
    static func generate(milliseconds: Int64) -> IssuedAPIKey {
        let time = String(UInt64(clamping: milliseconds) & 0xFFFF_FFFF_FFFF, radix: 16)
        return IssuedAPIKey(
            id: idPrefix + String(repeating: "0", count: 12 - time.utf8.count) + time + Hex.encode(SecureRandom.bytes(6)),
            key: prefix + Hex.encode(SecureRandom.bytes(24)))
    }

    /// Whether a bearer credential has the issued-key shape's prefix (then it is never a JWT).
    static func hasPrefix(_ credential: some StringProtocol) -> Bool {
        credential.utf8.starts(with: prefix.utf8)
    }

    /// The SHA-256 the store keeps.
    var sha256: String { BizServerConfiguration.apiKeyHash(key) }
}
