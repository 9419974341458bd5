import HTTPTransport

/// Why an object-store call failed: one closed table for the whole S3 client (DESIGN.md habit 5).
///
/// `kind` is what callers branch on; the blob store maps every retryable kind (``isRetryable``)
/// to `503` with `Retry-After` and never acknowledges bytes the store did not confirm.
public struct S3Error: Error, Sendable, CustomStringConvertible {
    /// The class of failure.
    public enum Kind: Hashable, Sendable {
        /// 404: `NoSuchKey`, `NoSuchBucket`, `NoSuchUpload`.
        case notFound
        /// 412 `PreconditionFailed` (an `If-Match` / `If-None-Match` that did not hold), or
        /// 304 for a conditional GET.
        case preconditionFailed
        /// 403: `AccessDenied`, `SignatureDoesNotMatch`, `InvalidAccessKeyId`, a skewed clock —
        /// a configuration problem, not worth retrying.
        case accessDenied
        /// 503 `SlowDown` / `ServiceUnavailable`, 500 `InternalError`: the store is overloaded or
        /// hiccuped; retry after a pause.
        case slowDown
        /// No response at all: refused, timed out, cut mid-exchange. The store may be down.
        case unavailable
        /// 400 `BadDigest` / `XAmzContentSHA256Mismatch`: the body the store received does not
        /// match its checksum or signed hash (``S3Settings/PayloadIntegrity``), so it was damaged
        /// on the way; the same bytes sent again may arrive whole.
        case damagedInTransit
        /// Any other 4xx: the store refused the request as malformed (`EntityTooSmall`,
        /// `InvalidPart`, `InvalidRange`, ...): a bug on our side, not worth retrying.
        case rejected
        /// Anything else (an unexpected status, or an answer we could not parse).
        case other
    }

    /// The class of failure.
    public var kind: Kind
    /// The HTTP status, when a response came.
    public var status: Int?
    /// S3's `<Code>`, e.g. `NoSuchKey`, when the store sent one.
    public var code: String?
    /// What happened, for logs (S3's `<Message>` or the transport's explanation).
    public var message: String

    /// Creates an error.
    public init(_ kind: Kind, status: Int? = nil, code: String? = nil, message: String) {
        self.kind = kind
        self.status = status
        self.code = code
        self.message = message
    }

    /// Whether the same request may succeed later: overload, network failures, a damaged body.
    public var isRetryable: Bool { kind == .slowDown || kind == .unavailable || kind == .damagedInTransit }

    /// `<kind> (<status> <code>): <message>`.
    public var description: String {
        let detail = [status.map(String.init), code].compactMap { $0 }.joined(separator: " ")
        return detail.isEmpty ? "\(kind): \(message)" : "\(kind) (\(detail)): \(message)"
    }

    /// The one place an S3 error response becomes an ``S3Error`` (S3 API reference, "Error
    /// responses": `<Error><Code>…</Code><Message>…</Message></Error>`; HEAD answers carry no body).
    static func from(status: Int, body: [UInt8]) -> S3Error {
        let root = S3XML.parse(body)
        let code = root?.name == "Error" ? root?.text(of: "Code") : nil
        let message = root?.text(of: "Message") ?? "HTTP \(status)"
        let kind: Kind = switch (status, code) {
        case (_, "NoSuchKey"), (_, "NoSuchBucket"), (_, "NoSuchUpload"), (404, _): .notFound
        case (_, "PreconditionFailed"), (412, _), (304, _): .preconditionFailed
        case (_, "SlowDown"), (_, "ServiceUnavailable"), (_, "InternalError"), (503, _), (500, _): .slowDown
        case (_, "AccessDenied"), (_, "SignatureDoesNotMatch"), (_, "InvalidAccessKeyId"), (403, _): .accessDenied
        case (_, "BadDigest"), (_, "XAmzContentSHA256Mismatch"): .damagedInTransit
        case (400..<500, _): .rejected
        default: .other
        }
        return S3Error(kind, status: status, code: code, message: message)
    }

    /// The one place a transport failure becomes an ``S3Error``.
    static func from(_ error: TransportError) -> S3Error {
        switch error.kind {
        case .invalidRequest, .io, .tooLarge: S3Error(.other, message: error.description)
        case .cancelled, .connect, .timeout, .other: S3Error(.unavailable, message: error.description)
        }
    }
}
