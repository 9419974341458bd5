/// Where a request body comes from.
public enum TransportBody: Sendable, Equatable {
    /// No body.
    case none
    /// Bytes in memory (tokens, callback JSON, small chunks).
    case bytes([UInt8])
    /// `length` bytes of the file at `path` from byte `offset`, streamed from disk as the
    /// connection takes them: a 4 MiB upload chunk is never loaded whole.
    case file(path: String, offset: Int64, length: Int64)

    /// The body length in bytes (the request's `Content-Length`).
    public var count: Int64 {
        switch self {
        case .none: 0
        case .bytes(let bytes): Int64(bytes.count)
        case .file(_, _, let length): length
        }
    }
}
