public import HTTPKit

/// Biz-server errors render themselves once, in HTTPKit, as `{"error": message}`.
extension BizError: HTTPResponseError {
    /// The status of the table row.
    public var httpStatus: Int { status }
    /// The client-facing text (never `detail`).
    public var clientMessage: String { message }
    /// `Retry-After` for 429s.
    public var responseHeaders: HTTPHeaders {
        guard let retryAfter else { return [:] }
        return ["Retry-After": String(retryAfter)]
    }
}
