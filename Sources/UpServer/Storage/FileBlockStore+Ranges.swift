public import Foundation

extension FileBlockStore: ByteRangeServing {
    /// `<dataDir>/tmp`: the blob directory's sibling, where earlier versions joined downloads of
    /// several blobs in scratch files (they stream now, `SegmentReader`); `UpServer.open` still
    /// empties it at startup of what a crash of such a version left.
    public var scratchDirectory: URL {
        directory.deletingLastPathComponent().appendingPathComponent("tmp", isDirectory: true)
    }

    /// See `ByteRangeServing.fileRange(of:range:)`: the blob's file itself (zero copies); nil for
    /// a blob kept as a row (`InlineBlobs`).
    public func fileRange(of blob: BlobID, range: Range<Int64>) throws -> FileRange? {
        if try lengthWithoutFile(of: blob) != nil { return nil }
        return try Self.range(range, of: url(of: blob))
    }

    /// `range` of `file`, as a descriptor of its own.
    private static func range(_ range: Range<Int64>, of file: URL) throws -> FileRange {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        guard size >= UInt64(range.upperBound) else {
            throw BlockStoreError.io(nil, reason: "blob \(file.lastPathComponent) shorter than its segment")
        }
        // The handle closes its own descriptor; the range's is a duplicate.
        let descriptor = dup(handle.fileDescriptor)
        guard descriptor >= 0 else { throw BlockStoreError.io(nil, reason: "dup failed") }
        return FileRange(descriptor: descriptor, offset: UInt64(range.lowerBound), length: UInt64(range.count))
    }
}
