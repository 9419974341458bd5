/// An error that knows how it looks to an HTTP client. Any layer's error type can conform; the
/// server renders it in one place as `{"error": clientMessage}` with `httpStatus` and
/// `responseHeaders`. Errors that do not conform become 500 `{"error":"internal error"}` and are
/// logged with their details.
public protocol HTTPResponseError: Error {
    /// The status code to answer with.
    var httpStatus: Int { get }
    /// The text for the client; must not contain secrets or internals.
    var clientMessage: String { get }
    /// Extra response headers, e.g. `Retry-After`.
    var responseHeaders: HTTPHeaders { get }
}

extension HTTPResponseError {
    /// No extra headers by default.
    public var responseHeaders: HTTPHeaders { [:] }
}
