public import Basics

/// What the middleware reports after each response (``Middleware/report(_:logger:)``): for the
/// access log and metrics.
public struct ResponseEvent: Sendable {
    /// The request method.
    public var method: HTTPMethod
    /// The matched route pattern, or `"unmatched"` (never the raw path: bounded label values).
    public var route: String
    /// The status sent.
    public var status: Int
    /// Seconds from the head arriving to the response being handed to the connection.
    public var duration: Double
    /// Body bytes sent.
    public var bytes: Int
    /// The request path without its query (queries may carry tokens).
    public var path: String
    /// The request id (`X-Reqid`).
    public var requestID: String
    /// The client's IP address (`""` in-process).
    public var remoteAddress: String
    /// The fields the handler attached to its access-log line, in order.
    public var fields: [(key: String, value: Logger.Value)]

    /// Creates an event.
    public init(
        method: HTTPMethod, route: String, status: Int, duration: Double, bytes: Int, path: String = "",
        requestID: String = "", remoteAddress: String = "", fields: [(key: String, value: Logger.Value)] = []
    ) {
        self.method = method
        self.route = route
        self.status = status
        self.duration = duration
        self.bytes = bytes
        self.path = path
        self.requestID = requestID
        self.remoteAddress = remoteAddress
        self.fields = fields
    }
}
