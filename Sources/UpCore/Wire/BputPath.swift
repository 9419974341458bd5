/// `POST /bput/<ctx>/<nextChunkOffset>` — append a chunk to a v1 block (qiniu-protocol.md §4.2).
///
/// Only the shape is checked here; the ctx itself is authenticated with
/// ``BlockContext/decode(_:mac:now:)`` (701 when forged or stale), and the server then requires
/// `nextChunkOffset == ctx.offset` (701 otherwise, §4.2).
public struct BputPath: Sendable, Equatable {
    /// The ctx text as received: non-empty, `[A-Za-z0-9_=-]` only.
    public var context: String
    /// Where the chunk starts inside the block, 0…``QiniuBlock/size``.
    public var offset: Int

    /// Creates a path value.
    ///
    /// - Parameters:
    ///   - context: A ctx from the previous mkblk/bput of the block.
    ///   - offset: That reply's `offset`.
    public init(context: String, offset: Int) {
        self.context = context
        self.offset = offset
    }

    /// Parses a request path as received (percent-decoding as for ``MkfilePath``).
    ///
    /// - Parameter path: The raw path.
    /// - Returns: The parsed path.
    /// - Throws: ``UpError`` `.badRequest` (400) for a wrong segment count, an empty ctx or one
    ///   with characters outside `[A-Za-z0-9_=-]`, or a bad offset.
    public static func parse(_ path: some StringProtocol) throws(UpError) -> BputPath {
        let segments = try WirePath.segments(path, after: "/bput/")
        guard segments.count == 2 else {
            throw UpError(.badRequest, detail: "bput takes <ctx>/<offset>, got \(segments.count) segments")
        }
        guard MkfileBody.isContextText(segments[0]) else {
            throw UpError(.badRequest, detail: "bput ctx is empty or has characters outside [A-Za-z0-9_=-]")
        }
        let offset = try WirePath.integer(
            segments[1], field: "nextChunkOffset", in: 0...Int64(QiniuBlock.size))
        return BputPath(context: segments[0], offset: Int(offset))
    }

    /// The request path.
    public var path: String { "/bput/\(context)/\(offset)" }
}
