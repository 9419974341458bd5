public import Foundation
import NativeCrypto

extension FileBlockStore: ByteRangeServing {
    /// `<dataDir>/tmp`: the blob directory's sibling, on the same disk (not a possibly RAM-backed
    /// /tmp). Scratch files are unlinked as soon as they are open; `UpServer.open` empties it at
    /// startup of what a crash left.
    public var scratchDirectory: URL {
        directory.deletingLastPathComponent().appendingPathComponent("tmp", isDirectory: true)
    }

    /// See `ByteRangeServing.fileRange(joining:)`: one segment is its blob file itself (zero
    /// copies); several are concatenated into an unlinked scratch file — HTTPKit's response body
    /// is bytes or one file range, not a stream, so this copy is the price of a bounded footprint.
    public func fileRange(joining segments: [Segment]) throws -> FileRange {
        if segments.count == 1 { return try Self.range(of: url(of: segments[0].blob), length: segments[0].length) }
        try FileManager.default.createDirectory(at: scratchDirectory, withIntermediateDirectories: true)
        let file = scratchDirectory.appendingPathComponent("download-" + Hex.encode(SecureRandom.bytes(12)))
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw BlockStoreError.io(nil, reason: "cannot create \(file.path)")
        }
        defer { try? FileManager.default.removeItem(at: file) }
        let writer = try FileHandle(forWritingTo: file)
        defer { try? writer.close() }
        var total: Int64 = 0
        for segment in segments {
            try forEachChunk(of: segment.blob, range: 0..<segment.length, size: 1 << 20) { piece in
                try writer.write(contentsOf: Data(piece))
            }
            total += segment.length
        }
        return try Self.range(of: file, length: total)
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
