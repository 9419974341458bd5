/// Sends HTTP requests: the one seam between upload logic and the network.
///
/// The reference client and the up-server's callbacks depend on this protocol only, so tests plug
/// in `RecordingTransport` and an Apple-platform build can plug in a URLSession transport
/// (DESIGN.md, "HTTP client"). ``CurlTransport`` is the implementation on Linux.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the response whatever its status (a 4xx/5xx is a response,
    /// not an error). Throws ``TransportError`` when no complete response arrived; cancelling the
    /// calling task cancels the transfer and throws ``TransportError/Kind/cancelled``.
    func send(_ request: TransportRequest) async throws -> TransportResponse
}
