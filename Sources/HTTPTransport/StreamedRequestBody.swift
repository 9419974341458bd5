/// A request body of known length whose bytes are produced while it is sent.
///
/// `Content-Length` is `length`; the pieces must add up to exactly that, or the request fails
/// (fewer: a read error once they end; more: the producer's surplus is refused). Iterated once.
public struct StreamedRequestBody: Sendable {
    /// The body length in bytes.
    public var length: Int64
    /// The bytes, in order, in pieces of any size.
    public var pieces: any AsyncSequence<[UInt8], any Error> & Sendable

    /// Creates a body of `length` bytes read from `pieces`.
    public init(length: Int64, pieces: some AsyncSequence<[UInt8], any Error> & Sendable) {
        self.length = length
        self.pieces = pieces
    }
}
