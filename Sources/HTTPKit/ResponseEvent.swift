/// What the server reports to its observer after each response (for metrics).
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
}
