/// One HTTP request, as plain values.
public struct TransportRequest: Sendable {
    /// The method, e.g. `"POST"`.
    public var method: String
    /// An absolute `http://` or `https://` URL; other schemes are refused.
    public var url: String
    /// Header fields in order. A `Host` field replaces the one derived from `url` (Qiniu's
    /// `callbackHost`); `Content-Length` is computed from `body`.
    public var headers: [(String, String)]
    /// The body.
    public var body: TransportBody
    /// Time allowed for the whole exchange, from the call until the last response byte
    /// (including any wait for a free pooled connection).
    public var timeout: Duration
    /// Time allowed to establish the TCP (and TLS) connection.
    public var connectTimeout: Duration
    /// The largest response body accepted; a larger one fails with ``TransportError/Kind/tooLarge``
    /// without buffering more than this.
    public var maxResponseBytes: Int
    /// Send the body at most this many bytes per second, paced as it goes (not in bursts); 0
    /// (the default) means as fast as the connection takes it. An uploader's rate limit.
    public var maxSendBytesPerSecond: Int64
    /// Called with the body bytes sent so far: increasing, ending at `body.count` on success.
    /// It runs on the transport's I/O thread, so it must be quick (store a number, yield to a
    /// stream), never block.
    public var progress: (@Sendable (Int64) -> Void)?

    /// Creates a request; see each property for its meaning.
    public init(
        method: String,
        url: String,
        headers: [(String, String)] = [],
        body: TransportBody = .none,
        timeout: Duration = .seconds(60),
        connectTimeout: Duration = .seconds(10),
        maxResponseBytes: Int = 16 << 20,
        maxSendBytesPerSecond: Int64 = 0,
        progress: (@Sendable (Int64) -> Void)? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.connectTimeout = connectTimeout
        self.maxResponseBytes = maxResponseBytes
        self.maxSendBytesPerSecond = maxSendBytesPerSecond
        self.progress = progress
    }
}
