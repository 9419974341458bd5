/// A response handed to libmicrohttpd: status, header fields and a body.
///
/// `Content-Length` is computed by MHD from the body; callers must not set it.
public struct RawResponse: Sendable {
    /// Where the body bytes come from.
    public enum Body: Sendable {
        /// Bytes in memory; MHD copies them when the response is queued.
        case bytes([UInt8])
        /// `length` bytes of an open file starting at `offset`, sent with sendfile where possible.
        /// Ownership of `descriptor` passes to the server: it is closed after sending, or when the
        /// response can no longer be sent (client gone, already answered).
        case file(descriptor: Int32, offset: UInt64, length: UInt64)
    }

    /// The status code, e.g. 200.
    public var status: Int
    /// Header fields in the order they are written.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: Body

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: Body = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
