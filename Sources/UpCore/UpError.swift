/// The one error type of the upload protocol: a closed table of Qiniu error codes
/// (qiniu-protocol.md §8) plus a log-only detail.
///
/// Equality compares ``code`` only, so tests write `#expect(throws: UpError(.expiredToken))`.
/// ``detail`` is for logs and never reaches the client: several codes deliberately share the
/// client text `bad token` so an uploader cannot tell an unknown AccessKey from a bad signature.
///
/// ```swift
/// throw UpError(.expiredToken, detail: "deadline \(policy.deadline), now \(now)")
/// ```
public struct UpError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One row of the error table.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// HTTP status sent to the client; equal to the Qiniu error code.
        public let status: Int
        /// The client-visible `"error"` text of the JSON body.
        public let message: String
        /// Stable, label-safe name for logs and metrics (`[a-z0-9_]`); unique per row.
        public let name: String

        /// Creates a row. Other layers may add rows in extensions; keep `name` unique.
        ///
        /// - Parameters:
        ///   - status: HTTP status / Qiniu code.
        ///   - message: Client-visible text.
        ///   - name: Metric-safe unique name.
        public init(status: Int, message: String, name: String) {
            self.status = status
            self.message = message
            self.name = name
        }

        /// The ``name``.
        public var description: String { name }
    }

    /// Which row of the table this error is.
    public let code: Code
    /// Log-only explanation; never sent to the client (it may name an AccessKey or a field).
    public let detail: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The table row.
    ///   - detail: Log-only explanation.
    public init(_ code: Code, detail: String = "") {
        self.code = code
        self.detail = detail
    }

    /// Compares codes only; ``detail`` is ignored.
    public static func == (lhs: UpError, rhs: UpError) -> Bool { lhs.code == rhs.code }

    /// `name (status): detail`, for logs.
    public var description: String {
        detail.isEmpty ? "\(code.name) (\(code.status))" : "\(code.name) (\(code.status)): \(detail)"
    }

    /// The response body Qiniu clients expect: `{"error":"<message>"}` (qiniu-protocol.md §8).
    public var responseBody: String {
        JSONValue.object([("error", .string(code.message))]).serialized()
    }
}

// qiniu-protocol.md §8 (statuses) and §1.2 (token checks). Texts marked "placeholder" are not
// pinned by any SDK; clients key on the status.
extension UpError.Code {
    /// 401: no token in the request (form field `token` missing) — §1.2 step 1.
    public static let tokenNotSpecified = Self(status: 401, message: "token not specified", name: "token_not_specified")
    /// 401: token malformed (not 3 fields, bad base64, JSON not an object, no scope/deadline) — §1.2 step 2.
    public static let badToken = Self(status: 401, message: "bad token", name: "bad_token")
    /// 401: `now > deadline` — §1.2 step 3.
    public static let expiredToken = Self(status: 401, message: "expired token", name: "expired_token")
    /// 401: AccessKey not in the key ring. Client text is `bad token`: do not leak which check failed.
    public static let unknownAccessKey = Self(status: 401, message: "bad token", name: "unknown_access_key")
    /// 401: HMAC mismatch (token or callback signature). Client text is `bad token`, as for Qiniu.
    public static let badSignature = Self(status: 401, message: "bad token", name: "bad_signature")
    /// 631: the scope's bucket does not exist — §1.2 step 4.
    public static let noSuchBucket = Self(status: 631, message: "no such bucket", name: "no_such_bucket")
    /// 403: key outside the token's scope (also for the prefix scope) — §1.3 `scope` [ambiguous → 403].
    public static let keyMismatch = Self(
        status: 403, message: "key doesn't match with scope", name: "key_mismatch")
    /// 403: key not listed in the policy's `keylimit` (or no key given while `keylimit` is set) — §1.3.
    public static let keyNotInKeyLimit = Self(
        status: 403, message: "key doesn't match with scope", name: "key_not_in_keylimit")
    /// 403: sniffed MIME type refused by `mimeLimit` — §1.3.
    public static let limitedMimeType = Self(status: 403, message: "limited mimeType", name: "limited_mime_type")
    /// 403: size below `fsizeMin` — §1.3. Text is a placeholder.
    public static let fileTooSmall = Self(status: 403, message: "fsize too small", name: "file_too_small")
    /// 413: size above `fsizeLimit` — §1.3. Text is a placeholder.
    public static let fileTooLarge = Self(status: 413, message: "fsize too large", name: "file_too_large")
    /// 406: form `crc32` field does not match the body — §7.3. Text is a placeholder.
    public static let crc32Mismatch = Self(status: 406, message: "crc32 not match", name: "crc32_mismatch")
    /// 614: the key exists and may not be overwritten — §1.3.
    public static let fileExists = Self(status: 614, message: "file exists", name: "file_exists")
    /// 579: stored, but every callback URL failed — §3.4.
    public static let callbackFailed = Self(status: 579, message: "callback failed", name: "callback_failed")
    /// 612: v2 upload id unknown; go/Java SDKs match this exact text — §8.
    public static let noSuchUploadID = Self(status: 612, message: "no such uploadId", name: "no_such_upload_id")
    /// 701: v1 ctx forged, stale, or offset wrong — §4, §8.
    public static let invalidContext = Self(status: 701, message: "invalid ctx", name: "invalid_ctx")
    /// 400: malformed request (generic).
    public static let badRequest = Self(status: 400, message: "bad request", name: "bad_request")
    /// 400: a key that breaks ``ObjectKeyRule`` (over 750 bytes, or NUL). Text is a placeholder.
    public static let invalidKey = Self(status: 400, message: "invalid key", name: "invalid_key")
    /// 400: a form upload without the `file` part — §6, §8.
    public static let fileNotSpecified = Self(
        status: 400, message: "file is not specified in multipart", name: "file_not_specified")
    /// 400: a JSON body that does not parse or has the wrong shape.
    public static let invalidJSON = Self(status: 400, message: "invalid json", name: "invalid_json")
    /// 400: v2 part `Content-MD5` mismatch — Appendix A.7.
    public static let contentMD5Mismatch = Self(
        status: 400, message: "Content-MD5 mismatch", name: "content_md5_mismatch")
    /// 573: rate limited — §8.
    public static let tooFrequent = Self(status: 573, message: "too frequent", name: "too_frequent")
    /// 599: unexpected internal failure (retryable for the SDKs) — §8.
    public static let internalError = Self(status: 599, message: "server operation failed", name: "internal_error")
    /// 503: the data disk is full (ENOSPC/EDQUOT writing a blob, SQLITE_FULL in the index), so
    /// nothing of the request was acknowledged. 503 is §8's "unavailable — transient" row: every
    /// SDK retries it (Python's `need_retry`, §8; one more host in §9.6) and no SDK stops on it
    /// the way it stops on 579/612/614/701 — exactly right for "the same request succeeds once
    /// space is freed": acknowledged chunks, parts and objects stay intact, so a client resumes.
    /// 599 would be retried as well but says "bug"; 507 (WebDAV) is no Qiniu code. Sent with
    /// `Retry-After` (up-server's `UpError.retryAfterSeconds`). Text is a placeholder.
    public static let insufficientStorage = Self(
        status: 503, message: "insufficient storage", name: "insufficient_storage")

    /// Every row defined in UpCore, for tests and metric registration.
    public static let all: [UpError.Code] = [
        tokenNotSpecified, badToken, expiredToken, unknownAccessKey, badSignature, noSuchBucket, keyMismatch,
        keyNotInKeyLimit, limitedMimeType, fileTooSmall, fileTooLarge, crc32Mismatch, fileExists, callbackFailed,
        noSuchUploadID, invalidContext, badRequest, invalidKey, fileNotSpecified, invalidJSON, contentMD5Mismatch, tooFrequent,
        internalError, insufficientStorage,
    ]
}
