/// A request body as an async sequence of byte pieces in arrival order (sizes vary, typically up
/// to a few tens of KiB). Iterating applies backpressure: MHD stops reading from the socket while
/// too many pieces are waiting. Throws ``HTTPExchangeError`` if the client disconnects.
public struct HTTPBodyPieces: AsyncSequence, Sendable {
    /// One piece of the body.
    public typealias Element = [UInt8]
    /// The error a read can throw.
    public typealias Failure = any Error

    let exchange: HTTPExchange

    /// Reads pieces one at a time.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let exchange: HTTPExchange

        /// The next piece, or `nil` at the end of the body.
        public mutating func next() async throws -> [UInt8]? {
            try await exchange.nextPiece()
        }
    }

    /// Starts reading.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(exchange: exchange) }
}
