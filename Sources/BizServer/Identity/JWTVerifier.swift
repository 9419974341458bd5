/// Verifies a parsed JWT against a set of keys and the claims policy. No I/O, time passed in;
/// fetching the keys is `JWKSSource`'s job.
///
/// The key is chosen without trusting the token's `alg` (RFC 8725 §3.1, the "HS256 signed with
/// the RSA public key" attack): a `kid` names a JWKS key, whose algorithm the `alg` header must
/// then equal; an HS256 token uses the configured secret, the only HS256 key there is; a token
/// without `kid` uses the one key of its algorithm, refused when there are several.
struct JWTVerifier: Sendable {
    let policy: JWTClaimsPolicy

    /// The key that must have signed `jwt`, from the JWKS `keys` and the optional `secret`.
    ///
    /// Throws `unknown_kid` only when a fresher key set could change the answer: the caller
    /// refetches on it (at most once a minute) and asks again.
    static func key(
        for jwt: CompactJWT, keys: [VerificationKey], secret: VerificationKey?
    ) throws(JWTRefusal) -> VerificationKey {
        guard let algorithm = JWTAlgorithm(rawValue: jwt.algorithm) else {
            throw JWTRefusal(.unsupportedAlgorithm, "alg \(jwt.algorithm.prefix(16))")
        }
        if let kid = jwt.keyID, let key = keys.first(where: { $0.keyID == kid }) {
            guard key.algorithm == algorithm else {
                throw JWTRefusal(.algorithmMismatch, "token says \(algorithm.rawValue), key \(kid) is \(key.algorithm.rawValue)")
            }
            return key
        }
        if algorithm == .hs256 {
            // A kid on an HS256 token names nothing here: the secret is the one HS256 key.
            guard let secret else { throw JWTRefusal(.algorithmMismatch, "HS256 token, no hs256Secret configured") }
            return secret
        }
        if jwt.keyID != nil { throw JWTRefusal(.unknownKeyID) }
        let candidates = keys.filter { $0.algorithm == algorithm }
        guard candidates.count <= 1 else { throw JWTRefusal(.missingKeyID) }
        guard let key = candidates.first else {
            throw JWTRefusal(.algorithmMismatch, "no \(algorithm.rawValue) key in the set")
        }
        return key
    }

    /// The `sub` of `jwt` if `key` signed it and its claims pass at `now`.
    func subject(of jwt: CompactJWT, key: VerificationKey, now: Double) throws(JWTRefusal) -> String {
        guard key.verifies(jwt.signature, of: jwt.signingInput) else { throw JWTRefusal(.badSignature) }
        // Claims are read only once the signature vouches for them.
        return try policy.subject(of: JWTClaims.parse(jwt.payload), now: now)
    }
}
