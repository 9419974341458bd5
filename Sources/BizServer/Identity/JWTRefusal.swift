/// Why an end user's JWT was refused. Each reason is a row of biz-server's error table
/// (`BizError+JWT.swift`): its HTTP status, its `{"error": …}` text and its metrics label.
struct JWTRefusal: Error, Equatable, CustomStringConvertible {
    /// The stable reason (`jwt_<rawValue>` in metrics and logs).
    enum Reason: String, Sendable, CaseIterable {
        case malformed
        case algNone = "alg_none"
        case unsupportedAlgorithm = "unsupported_alg"
        case algorithmMismatch = "alg_mismatch"
        case unknownKeyID = "unknown_kid"
        case missingKeyID = "missing_kid"
        case badSignature = "bad_signature"
        case missingExpiry = "missing_exp"
        case expired
        case notYetValid = "not_yet_valid"
        case wrongIssuer = "wrong_issuer"
        case wrongAudience = "wrong_audience"
        case missingSubject = "missing_sub"
        case badSubject = "bad_sub"
        case keysUnavailable = "keys_unavailable"
    }

    let reason: Reason
    /// For `malformed`: what is wrong, sent to the client (it describes the client's own token,
    /// never a secret); for the others: log-only context. Never contains the token.
    let detail: String

    init(_ reason: Reason, _ detail: String = "") {
        self.reason = reason
        self.detail = detail
    }

    static func == (lhs: JWTRefusal, rhs: JWTRefusal) -> Bool { lhs.reason == rhs.reason }

    static func malformed(_ detail: String) -> JWTRefusal { JWTRefusal(.malformed, detail) }

    var description: String { reason.rawValue + (detail.isEmpty ? "" : ": \(detail)") }
}
