internal import NativeHTTP

/// A request body as an async sequence of byte pieces, in arrival order.
///
/// On a streamed route the pieces come straight from the connection with backpressure (MHD stops
/// reading while a few hundred KiB are unread), so a handler can hash and write a 4 MiB chunk
/// without holding it. Iteration throws ``HTTPError`` 413 as soon as the route's limit is passed,
/// and an error if the client disconnects. Iterate it once.
public struct RequestBodyStream: AsyncSequence, Sendable {
    /// One piece of the body.
    public typealias Element = [UInt8]
    /// The error iteration can throw.
    public typealias Failure = any Error

    fileprivate enum Source: Sendable {
        case bytes([UInt8])
        case connection(HTTPBodyPieces, limit: Int)
        case stream(AsyncThrowingStream<[UInt8], any Error>)
    }

    private let source: Source

    /// A stream that yields `bytes` as a single piece (nothing if empty).
    public init(bytes: [UInt8]) { source = .bytes(bytes) }

    init(pieces: HTTPBodyPieces, limit: Int) { source = .connection(pieces, limit: limit) }

    /// A stream that yields the pieces of `stream` as they come, and throws what it throws: a
    /// body produced in-process (a test playing a client that stalls or goes away mid-body).
    public init(_ stream: AsyncThrowingStream<[UInt8], any Error>) { source = .stream(stream) }

    /// Reads pieces one at a time.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var pending: [UInt8]?
        private var connection: HTTPBodyPieces.AsyncIterator?
        private var stream: AsyncThrowingStream<[UInt8], any Error>.AsyncIterator?
        private var limit: Int
        private var seen = 0

        fileprivate init(source: Source) {
            switch source {
            case .bytes(let bytes):
                pending = bytes.isEmpty ? nil : bytes
                connection = nil
                limit = .max
            case .connection(let pieces, let limit):
                pending = nil
                connection = pieces.makeAsyncIterator()
                self.limit = limit
            case .stream(let pieces):
                pending = nil
                stream = pieces.makeAsyncIterator()
                limit = .max
            }
        }

        /// The next piece, or `nil` at the end of the body.
        public mutating func next() async throws -> [UInt8]? {
            if let bytes = pending {
                pending = nil
                return bytes
            }
            if stream != nil { return try await stream?.next() }
            guard var iterator = connection else { return nil }
            let piece = try await iterator.next()
            connection = iterator
            guard let piece else { return nil }
            seen += piece.count
            if seen > limit { throw HTTPError.payloadTooLarge(limit: limit) }
            return piece
        }
    }

    /// Starts reading.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(source: source) }

    /// Reads the whole stream into memory, failing with 413 past `limit` bytes (never buffering
    /// more than `limit` plus one piece).
    public func collect(upTo limit: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await piece in self {
            guard bytes.count + piece.count <= limit else { throw HTTPError.payloadTooLarge(limit: limit) }
            bytes.append(contentsOf: piece)
        }
        return bytes
    }
}

extension RequestBodyStream {
    /// Whether `error`, thrown while reading a request body, means the client went away mid-body
    /// (or the rest of the body was being discarded). Not a server failure: a handler that maps
    /// unknown errors to 5xx should rethrow it as-is, and HTTPKit logs the request at info level.
    public static func isDisconnect(_ error: any Error) -> Bool { error is HTTPExchangeError }
}
