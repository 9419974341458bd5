/// A plain HTTP error: a status, a message for the client, and optional headers.
///
/// ```swift
/// throw HTTPError(status: 429, message: "too many requests", headers: ["Retry-After": "1"])
/// ```
public struct HTTPError: HTTPResponseError, Equatable, CustomStringConvertible {
    /// The status code.
    public var status: Int
    /// The client-facing message.
    public var message: String
    /// Extra response headers.
    public var headers: HTTPHeaders

    /// Creates an error.
    public init(status: Int, message: String, headers: HTTPHeaders = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    /// `status`.
    public var httpStatus: Int { status }
    /// `message`.
    public var clientMessage: String { message }
    /// `headers`.
    public var responseHeaders: HTTPHeaders { headers }

    /// `"<status> <message>"`.
    public var description: String { "\(status) \(message)" }

    /// Equal when status, message and header fields (in order) match.
    public static func == (lhs: HTTPError, rhs: HTTPError) -> Bool {
        lhs.status == rhs.status && lhs.message == rhs.message
            && lhs.headers.fields.elementsEqual(rhs.headers.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    /// 400 with `message`.
    public static func badRequest(_ message: String) -> HTTPError { HTTPError(status: 400, message: message) }
    /// 404 `not found`.
    public static let notFound = HTTPError(status: 404, message: "not found")
    /// 413 naming the limit.
    public static func payloadTooLarge(limit: Int) -> HTTPError {
        HTTPError(status: 413, message: "request body exceeds \(limit) bytes")
    }
    /// 503 used when a handler exceeds its deadline.
    public static let timedOut = HTTPError(status: 503, message: "handler timed out")
}
