/// A blob store that can hand a blob's bytes to the HTTP server as a range of an open file, so a
/// download within one blob is sent with sendfile, no copy through memory: the capability
/// `ObjectDownload` asks for, instead of knowing any store's type. `FileBlockStore` has it; a
/// store without it (in memory, S3), and any range across several blobs, is streamed
/// (`SegmentReader`).
public protocol ByteRangeServing: BlockStore {
    /// `range` of `blob`, as one range of an open file the caller then owns (and must close, or
    /// hand to the server, which closes it). The returned range holds exactly `range.count`
    /// bytes. Nil when this blob is not a file of its own (a small blob kept as a row): read it.
    ///
    /// - Throws: `BlockStoreError` for a missing blob or one shorter than `range`.
    func fileRange(of blob: BlobID, range: Range<Int64>) throws -> FileRange?
}

/// A range of an open file: what `ByteRangeServing` hands out.
public struct FileRange: Sendable, Equatable {
    /// The open descriptor; whoever holds the range owns it.
    public var descriptor: Int32
    /// Where the bytes start.
    public var offset: UInt64
    /// How many bytes.
    public var length: UInt64

    /// Creates a range.
    public init(descriptor: Int32, offset: UInt64, length: UInt64) {
        self.descriptor = descriptor
        self.offset = offset
        self.length = length
    }
}
