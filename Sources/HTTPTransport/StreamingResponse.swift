/// A response whose head is in and whose body is read as it arrives.
public struct StreamingResponse: Sendable {
    /// Status and header fields; its `body` is empty.
    public var head: TransportResponse
    /// The body, to be read once.
    public var body: ResponseBody

    /// Creates a streamed response (transports, and test doubles).
    public init(head: TransportResponse, body: ResponseBody) {
        self.head = head
        self.body = body
    }

    /// The status code.
    public var status: Int { head.status }
}

/// A response body as an async sequence of byte pieces. Read it once; dropping it (or calling
/// ``cancel()``) before the end stops the transfer and closes its connection.
public final class ResponseBody: AsyncSequence, Sendable {
    /// One piece of the body.
    public typealias Element = [UInt8]
    /// The error iteration can throw (a ``TransportError`` from a transport).
    public typealias Failure = any Error

    private let nextPiece: @Sendable () async throws -> [UInt8]?
    private let stop: @Sendable () -> Void

    /// A body whose pieces come from `next` (nil at the end) and which `cancel` stops.
    public init(next: @escaping @Sendable () async throws -> [UInt8]?, cancel: @escaping @Sendable () -> Void) {
        nextPiece = next
        stop = cancel
    }

    /// A body already in memory (test doubles).
    public convenience init(bytes: [UInt8]) {
        let pending = PendingBytes(bytes)
        self.init(next: { pending.take() }, cancel: {})
    }

    deinit { stop() }

    /// Stops the transfer; later reads throw.
    public func cancel() { stop() }

    /// Reads pieces in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let body: ResponseBody

        /// The next piece, or nil at the end.
        public mutating func next() async throws -> [UInt8]? { try await body.nextPiece() }
    }

    /// Starts reading.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(body: self) }

    /// Reads the rest into memory, failing with ``TransportError/Kind/tooLarge`` past `limit`
    /// bytes (error replies, small XML documents).
    public func collect(upTo limit: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await piece in self {
            guard bytes.count + piece.count <= limit else {
                cancel()
                throw TransportError(.tooLarge, "response body exceeds \(limit) bytes")
            }
            bytes.append(contentsOf: piece)
        }
        return bytes
    }
}

import Synchronization

/// Bytes handed out once, for ``ResponseBody/init(bytes:)``.
private final class PendingBytes: Sendable {
    private let bytes: Mutex<[UInt8]?>
    init(_ bytes: [UInt8]) { self.bytes = Mutex(bytes.isEmpty ? nil : bytes) }
    func take() -> [UInt8]? { bytes.withLock { value in defer { value = nil }; return value } }
}
