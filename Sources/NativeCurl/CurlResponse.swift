/// A completed response, copied out of libcurl's buffers.
public struct CurlResponse: Sendable {
    /// The status code of the final response (1xx interim responses are skipped).
    public var status: Int
    /// Header fields of the final response in arrival order, names as the server wrote them.
    public var headers: [(name: String, value: String)]
    /// The body (empty for HEAD).
    public var body: [UInt8]
    /// New connections this transfer opened: 0 when it reused a pooled one.
    public var connectionsOpened: Int
    /// Request body bytes sent.
    public var bytesSent: Int64

    /// Creates a response (tests and doubles; the multi handle fills it in otherwise).
    public init(
        status: Int, headers: [(name: String, value: String)], body: [UInt8],
        connectionsOpened: Int = 0, bytesSent: Int64 = 0
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.connectionsOpened = connectionsOpened
        self.bytesSent = bytesSent
    }
}
