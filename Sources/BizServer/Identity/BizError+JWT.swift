/// The end-user rows of biz-server's error table: a refused JWT is a 401 whose `error` says why
/// and whose metrics reason is `jwt_<reason>` (`upgate_biz_tokens_refused_total{reason=…}`).
/// Only a key set that could not be loaded at all is the server's fault: 503, retry later.
extension BizError {
    /// The row for `refusal`.
    static func jwt(_ refusal: JWTRefusal) -> BizError {
        let name = "jwt_" + refusal.reason.rawValue
        switch refusal.reason {
        case .malformed:
            return BizError(401, name, "malformed JWT: \(refusal.detail)")
        case .keysUnavailable:
            return BizError(503, name, "the identity provider's keys are unavailable, retry later", retryAfter: 60,
                detail: refusal.detail)
        default:
            return BizError(401, name, messages[refusal.reason] ?? "JWT refused", detail: refusal.detail)
        }
    }

    private static let messages: [JWTRefusal.Reason: String] = [
        .algNone: "unsecured JWT (alg none) refused",
        .unsupportedAlgorithm: "JWT algorithm not supported (RS256, ES256, EdDSA, HS256)",
        .algorithmMismatch: "JWT algorithm does not match its key",
        .unknownKeyID: "JWT key id (kid) not in the key set",
        .missingKeyID: "JWT has no kid and more than one key could have signed it",
        .badSignature: "JWT signature does not verify",
        .missingExpiry: "JWT has no exp",
        .expired: "JWT expired",
        .notYetValid: "JWT not valid yet (nbf)",
        .wrongIssuer: "JWT issuer (iss) not accepted",
        .wrongAudience: "JWT audience (aud) does not name this service",
        .missingSubject: "JWT has no sub",
        .badSubject: "JWT sub cannot be an object key segment",
    ]

    /// The user's `tokensPerMinutePerUser` is spent.
    static func userRateLimited(retryAfter: Int) -> BizError {
        BizError(429, "user_rate_limited", "too many token requests for this user", retryAfter: retryAfter)
    }

    /// The user's `maxBytesPerUserPerDay` is spent (`Retry-After`: when enough of the oldest
    /// counted uploads have left the 24-hour window).
    static func userQuotaExhausted(retryAfter: Int) -> BizError {
        BizError(429, "user_quota_exhausted", "daily upload volume for this user reached", retryAfter: retryAfter)
    }
}
