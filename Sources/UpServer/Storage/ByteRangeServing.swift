/// A blob store that can hand bytes to the HTTP server as a range of an open file, so a download
/// is served without copying it through memory: the capability `ObjectDownload` asks for, instead
/// of knowing any store's type. `FileBlockStore` has it; a store without it (in memory, or S3 —
/// which would rather redirect or stream) is read through `BlockStore.read`.
public protocol ByteRangeServing: BlockStore {
    /// `range` of the bytes of `segments` joined in order, as one range of an open file the
    /// caller then owns (and must close, or hand to the server, which closes it). The returned
    /// range holds exactly `range.count` bytes.
    ///
    /// - Throws: `BlockStoreError` for a missing or short blob, or a `range` outside the
    ///   segments; `UpError(.insufficientStorage)` when joining needs scratch space the disk
    ///   does not have.
    func fileRange(joining segments: [Segment], range: Range<Int64>) throws -> FileRange
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
