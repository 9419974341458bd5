import UpCore

/// The registered claims biz-server reads from a verified JWT (RFC 7519 §4.1), typed strictly:
/// a `NumericDate` must be a JSON number (`"exp": "1700000000"` is malformed, not a date), `aud`
/// a string or an array of strings. Other claims are the app's own and are ignored.
struct JWTClaims: Equatable {
    var issuer: String?
    var subject: String?
    var audience: [String]?
    var expiresAt: Double?
    var notBefore: Double?
    var issuedAt: Double?

    /// Parses the decoded claims set.
    static func parse(_ payload: [UInt8]) throws(JWTRefusal) -> JWTClaims {
        let object: JSONObject
        switch JSONObject.parse(payload) {
        case .success(let parsed): object = parsed
        case .failure(.duplicate(let name)): throw .malformed("claim '\(name)' appears twice")
        case .failure(.notAnObject), nil: throw .malformed("claims are not a JSON object")
        }
        var claims = JWTClaims()
        claims.issuer = try string(object, "iss")
        claims.subject = try string(object, "sub")
        claims.expiresAt = try date(object, "exp")
        claims.notBefore = try date(object, "nbf")
        claims.issuedAt = try date(object, "iat")
        switch object["aud"] {
        case nil: break
        case .string(let one)?: claims.audience = [one]
        case .array(let many)?:
            claims.audience = try many.map { value throws(JWTRefusal) in
                guard let text = value.stringValue else { throw .malformed("aud must be a string or an array of strings") }
                return text
            }
        default: throw .malformed("aud must be a string or an array of strings")
        }
        return claims
    }

    private static func string(_ object: JSONObject, _ name: String) throws(JWTRefusal) -> String? {
        guard let value = object[name] else { return nil }
        guard let text = value.stringValue else { throw .malformed("\(name) must be a string") }
        return text
    }

    private static func date(_ object: JSONObject, _ name: String) throws(JWTRefusal) -> Double? {
        switch object[name] {
        case nil: return nil
        case .int(let seconds)?: return Double(seconds)
        case .double(let seconds)?: return seconds
        default: throw .malformed("\(name) must be a number (NumericDate)")
        }
    }
}

/// What a verified token must also say before biz-server believes it: pure, time passed in.
struct JWTClaimsPolicy: Sendable, Equatable {
    /// The only accepted `iss`, compared exactly (RFC 7519 §4.1.1: case-sensitive).
    var issuer: String
    /// A value `aud` must contain.
    var audience: String
    /// Clock skew allowed on `exp` and `nbf`, seconds.
    var leewaySeconds: Double

    /// The token's `sub` if every check passes at `now` (Unix seconds), in this order: `exp`
    /// present and not passed, `nbf` not in the future (both give `leewaySeconds`), `iss`, `aud`,
    /// `sub` present and usable as an object key segment.
    func subject(of claims: JWTClaims, now: Double) throws(JWTRefusal) -> String {
        // A token without exp would be valid forever: refused, as every identity provider sets one.
        guard let expiresAt = claims.expiresAt else { throw JWTRefusal(.missingExpiry) }
        // RFC 7519 §4.1.4: now must be *before* exp.
        guard now < expiresAt + leewaySeconds else { throw JWTRefusal(.expired, "exp \(expiresAt), now \(now)") }
        if let notBefore = claims.notBefore, now + leewaySeconds < notBefore {
            throw JWTRefusal(.notYetValid, "nbf \(notBefore), now \(now)")
        }
        guard claims.issuer == issuer else { throw JWTRefusal(.wrongIssuer) }
        guard claims.audience?.contains(audience) == true else { throw JWTRefusal(.wrongAudience) }
        guard let subject = claims.subject else { throw JWTRefusal(.missingSubject) }
        guard EndUserSubject.isKeySegment(subject) else { throw JWTRefusal(.badSubject) }
        return subject
    }
}
