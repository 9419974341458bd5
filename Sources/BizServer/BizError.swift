/// Biz-server's error table: every refusal a client or the up server can get, with its HTTP
/// status, the `{"error": ...}` text, and a stable name used as the metrics `reason` label.
///
/// Equality is on the name, so tests compare codes while 400s still tell the client precisely
/// what was wrong (`message`). `detail` is for logs only and never sent.
public struct BizError: Error, Sendable, Equatable, CustomStringConvertible {
    /// HTTP status.
    public let status: Int
    /// Text of the `error` member of the JSON body.
    public let message: String
    /// Stable, label-safe name (metrics, logs, tests).
    public let name: String
    /// Seconds for a `Retry-After` header (429s, and 503s: the store is back within seconds).
    public let retryAfter: Int?
    /// Log-only context.
    public let detail: String

    init(_ status: Int, _ name: String, _ message: String, retryAfter: Int? = nil, detail: String = "") {
        self.status = status
        self.name = name
        self.message = message
        self.retryAfter = retryAfter
        self.detail = detail
    }

    /// Equal when the names are.
    public static func == (lhs: BizError, rhs: BizError) -> Bool { lhs.name == rhs.name }

    /// `name (status): message`.
    public var description: String { "\(name) (\(status)): \(message)" + (detail.isEmpty ? "" : " [\(detail)]") }

    /// The same error with log-only `detail`.
    func with(detail: String) -> BizError { BizError(status, name, message, retryAfter: retryAfter, detail: detail) }

    // MARK: API clients (token issuing, listing)

    /// No `Authorization: Bearer <api key>` header.
    public static let missingAPIKey = BizError(401, "missing_api_key", "missing API key")
    /// The API key is not configured.
    public static let badAPIKey = BizError(401, "bad_api_key", "bad API key")
    /// The client's token bucket is empty.
    public static func rateLimited(retryAfter: Int) -> BizError {
        BizError(429, "rate_limited", "too many token requests", retryAfter: retryAfter)
    }
    /// Body or query malformed; `message` says how.
    public static func invalidRequest(_ message: String) -> BizError { BizError(400, "invalid_request", message) }
    /// Requested key outside the client's prefix.
    public static let keyOutsidePrefix = BizError(403, "key_outside_prefix", "key doesn't match the allowed prefix")
    /// Declared size below the client's fsizeMin.
    public static let fileTooSmall = BizError(403, "fsize_too_small", "fsize below the allowed minimum")
    /// Declared size above the client's fsizeLimit.
    public static let fileTooLarge = BizError(413, "fsize_too_large", "fsize above the allowed limit")
    /// Declared MIME type outside the client's mimeLimit.
    public static let limitedMimeType = BizError(403, "limited_mime_type", "limited mimeType")
    /// No upload with that id for this client.
    public static let uploadNotFound = BizError(404, "upload_not_found", "no such upload")

    // MARK: Callbacks (from the up server)

    /// No `Authorization` header, or not `QBox …` / `Qiniu …`.
    public static let missingSignature = BizError(401, "missing_signature", "missing callback signature")
    /// Signature does not verify (tampered body or URL, wrong key).
    public static let badSignature = BizError(401, "bad_signature", "bad callback signature")
    /// Signed with an AccessKey that is not ours.
    public static let unknownAccessKey = BizError(401, "unknown_access_key", "bad callback signature")
    /// Signed `X-Qiniu-Date` outside the allowed clock skew: a replay or a broken clock.
    public static let staleDate = BizError(401, "stale_date", "callback date outside the allowed window")
    /// Configuration requires a signed `X-Qiniu-Date` and there is none.
    public static let dateRequired = BizError(401, "date_required", "callback must carry a signed X-Qiniu-Date")
    /// QBox does not sign JSON bodies; the signed `bodySha1` query is missing or does not match.
    public static let bodyHashMismatch = BizError(401, "body_hash_mismatch", "callback body does not match bodySha1")
    /// Callback body not parseable or missing required members.
    public static func malformedCallback(_ message: String) -> BizError { BizError(400, "malformed_callback", message) }

    // MARK: Server

    /// The upload store failed; the caller should retry (the up server's outbox does).
    public static let storeUnavailable = BizError(
        503, "store_unavailable", "upload store unavailable, retry later", retryAfter: 1)
}
