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

    /// The public id (`key_` and 16 hex digits, 64 random bits: unique, not secret).
    let id: String
    /// The key; shown once, never stored.
    let key: String

    /// A fresh id and key.
    static func generate() -> IssuedAPIKey {
        IssuedAPIKey(
            id: idPrefix + Hex.encode(SecureRandom.bytes(8)),
            key: prefix + Hex.encode(SecureRandom.bytes(24)))
    }

    /// Whether a bearer credential has the issued-key shape's prefix (then it is never a JWT).
    static func hasPrefix(_ credential: some StringProtocol) -> Bool {
        credential.utf8.starts(with: prefix.utf8)
    }

    /// The SHA-256 the store keeps.
    var sha256: String { BizServerConfiguration.apiKeyHash(key) }
}
