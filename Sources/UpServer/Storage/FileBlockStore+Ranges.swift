public import Foundation

extension FileBlockStore: ByteRangeServing {
    /// `<dataDir>/tmp`: the blob directory's sibling, on the same disk (not a possibly RAM-backed
    /// /tmp). Scratch files are unlinked as soon as they are open; `UpServer.open` empties it at
    /// startup of what a crash left.
    public var scratchDirectory: URL {
        directory.deletingLastPathComponent().appendingPathComponent("tmp", isDirectory: true)
    }

    /// See `ByteRangeServing.fileRange(joining:range:)`: a range within one blob is that blob's
    /// file itself (zero copies); one across several is concatenated into an unlinked scratch
    /// file (`BlockStore.spool(_:range:in:)`).
    public func fileRange(joining segments: [Segment], range: Range<Int64>) throws -> FileRange {
        let pieces = try Segment.pieces(of: range, in: segments)
        if pieces.count == 1 { return try Self.range(pieces[0].1, of: url(of: pieces[0].0)) }
        return try spool(segments, range: range, in: scratchDirectory)
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
