/// The JWS algorithms biz-server verifies (RFC 7518 §3.1; EdDSA from RFC 8037 §3.1).
///
/// A key is given one of these when it is loaded (from its JWK `alg`, else from `kty`/`crv`);
/// a token's `alg` header only has to agree with it, never chooses it (RFC 8725 §3.1).
public enum JWTAlgorithm: String, Sendable, CaseIterable {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = "RS256"
    /// ECDSA on P-256 with SHA-256.
    case es256 = "ES256"
    /// Ed25519.
    case edDSA = "EdDSA"
    /// HMAC-SHA256 under a shared secret (`hs256Secret`).
    case hs256 = "HS256"
}
