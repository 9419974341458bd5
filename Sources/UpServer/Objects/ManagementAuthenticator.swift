import HTTPKit
import UpCore

/// Authorises management reads (`/stat`, `/download`, `/admin/outbox`) with Qiniu's management
/// signature: `Authorization: QBox <AK>:<B64(HMAC(SK, "<path>[?<query>]\n"))>` — exactly what the
/// Python SDK's `Auth.token_of_request(url)` yields — or the v2 `Qiniu <AK>:<sign>` its
/// `BucketManager` sends by default (qiniu-protocol.md §3.2, §3.3).
///
/// The same recipe as a callback check (`CallbackVerifier`), over the raw request-target as
/// received; a QBox request with a form body has the body signed too, as Qiniu's rs does.
struct ManagementAuthenticator: Sendable {
    /// How far a signed `X-Qiniu-Date` may be from our clock, seconds: Qiniu's documented
    /// window for timestamped management requests is 15 minutes.
    static let maxClockSkew: Int64 = 900

    private let verifier: CallbackVerifier

    /// Creates an authenticator accepting the configured key pairs.
    init(keys: KeyRing) {
        verifier = CallbackVerifier(keys: keys)
    }

    /// Checks the request's `Authorization`.
    ///
    /// - Returns: The AccessKey that signed.
    /// - Throws: `UpError` 401 (`bad token`) when it is missing, malformed, for an unknown key,
    ///   does not verify, or carries a signed date outside ``maxClockSkew``.
    func authenticate(_ request: Request, now: Int64) throws(UpError) -> String {
        let verified = try verifier.verify(
            authorization: request.headers["Authorization"], method: request.method.rawValue,
            target: request.target, headers: request.headers.fields.map { ($0.name, $0.value) }, body: request.body)
        if let signed = verified.signedDate, abs(signed - now) > Self.maxClockSkew {
            throw UpError(.badToken, detail: "X-Qiniu-Date too far from now")
        }
        return verified.accessKey
    }
}
