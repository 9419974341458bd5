/// Why no complete response arrived.
///
/// `kind` is what callers branch on (retry another host, give up, report); `message` is for logs.
public struct TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The class of failure.
    public enum Kind: Hashable, Sendable {
        /// No connection could be made (refused, unreachable, name not resolved): the request was
        /// not sent, so retrying it elsewhere is always safe.
        case connect
        /// The connect timeout, the total timeout or the low-speed limit ran out. The server may
        /// have received and processed the request.
        case timeout
        /// The calling task was cancelled, or the transport shut down, before the response was in.
        case cancelled
        /// The response body is larger than the request's `maxResponseBytes`.
        case tooLarge
        /// The request body file could not be opened or read (`errno`), or is shorter than the
        /// region asked for (`EINVAL` before sending, `EIO` if it shrank while sending).
        case io(errno: Int32)
        /// The request is malformed (method, URL, scheme, a header with CR/LF) and was not sent.
        case invalidRequest
        /// Anything else: the connection broke mid-exchange, TLS failed, the reply was not HTTP.
        case other
    }

    /// The class of failure.
    public var kind: Kind
    /// What happened, for logs.
    public var message: String

    /// Creates an error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// `<kind>: <message>`.
    public var description: String { "\(kind): \(message)" }
}

extension TransportError {
    /// A short description free of URLs and secrets, for outbox rows and answers others see:
    /// `connection failed`, `timeout`, `cancelled`, `reply too large`, `invalid url`, `request failed`.
    public var summary: String {
        switch kind {
        case .connect: "connection failed"
        case .timeout: "timeout"
        case .cancelled: "cancelled"
        case .tooLarge: "reply too large"
        case .invalidRequest: "invalid url"
        case .io, .other: "request failed"
        }
    }
}
