public import Foundation

extension FileBlockStore: ByteRangeServing {
    /// `<dataDir>/tmp`: the blob directory's sibling, on the same disk (not a possibly RAM-backed
    /// /tmp). Scratch files are unlinked as soon as they are open; `UpServer.open` empties it at
    /// startup of what a crash left.
    public var scratchDirectory: URL {
        directory.deletingLastPathComponent().appendingPathComponent("tmp", isDirectory: true)
    }

    /// See `ByteRangeServing.fileRange(joining:)`: one segment is its blob file itself (zero
    /// copies); several are concatenated into an unlinked scratch file (`BlockStore.spool(_:in:)`).
    public func fileRange(joining segments: [Segment]) throws -> FileRange {
        if segments.count == 1 { return try Self.range(of: url(of: segments[0].blob), length: segments[0].length) }
        return try spool(segments, in: scratchDirectory)
    }

    /// `length` bytes of `file` from its start, as a descriptor of its own.
    private static func range(of file: URL, length: Int64) throws -> FileRange {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        guard size >= UInt64(length) else {
            throw BlockStoreError.io(nil, reason: "blob \(file.lastPathComponent) shorter than its segment")
        }
        // The handle closes its own descriptor; the range's is a duplicate.
        let descriptor = dup(handle.fileDescriptor)
        guard descriptor >= 0 else { throw BlockStoreError.io(nil, reason: "dup failed") }
        return FileRange(descriptor: descriptor, offset: 0, length: UInt64(length))
    }
}
