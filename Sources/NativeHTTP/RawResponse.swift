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
        /// Exactly `length` bytes produced by `source` while they are sent (``StreamedBody``):
        /// `Content-Length` is `length`. A source that fails, or ends short, cuts the connection
        /// mid-body; `source.cancel` runs if the body is dropped before the source finished.
        case stream(length: UInt64, source: RawBodySource)
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

/// Where a streamed body's bytes come from (``RawResponse/Body/stream(length:source:)``).
public struct RawBodySource: Sendable {
    /// The next piece (any size; empty pieces are skipped), or `nil` at the end. Called from one
    /// task at a time, only when the server has room for more (``StreamedBody``).
    public var next: @Sendable () async throws -> [UInt8]?
    /// Called once if the body is dropped before `next` returned `nil`, threw, or produced the
    /// declared length: the client went away, the daemon stopped, or the response was never sent.
    public var cancel: @Sendable () -> Void

    /// Creates a source.
    public init(next: @escaping @Sendable () async throws -> [UInt8]?, cancel: @escaping @Sendable () -> Void = {}) {
        self.next = next
        self.cancel = cancel
    }
}
