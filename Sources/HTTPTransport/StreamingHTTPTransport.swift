/// An ``HTTPTransport`` that can also stream: a request body produced while it is sent, and a
/// response body read as it arrives, each through a bounded window of memory.
///
/// The object-store client needs both (an upload chunk relayed to S3 as it arrives, a download
/// relayed from S3 to the client), without holding a block whole (DESIGN.md, "Round 2").
public protocol StreamingHTTPTransport: HTTPTransport {
    /// Sends `request` and returns when the response head is in, with its body still to be read.
    ///
    /// `body`, when given, replaces `request.body`. `request.timeout` covers the whole exchange,
    /// reading the body included; `request.maxResponseBytes` does not apply (the reader holds only
    /// the window).
    /// - Throws: ``TransportError`` when no response head arrived, or the error `body`'s pieces
    ///   threw (its producer failed, e.g. the client relaying the bytes disconnected).
    func stream(_ request: TransportRequest, body: StreamedRequestBody?) async throws -> StreamingResponse
}
