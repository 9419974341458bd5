import Foundation
import NativeCrypto

extension BlockStore {
    /// `range` of the bytes of `segments` joined in order, copied 1 MiB at a time into a scratch
    /// file under `scratchDirectory` that is unlinked before this returns: the one way a store
    /// whose blobs are not single files (several disk blobs, S3 chunk objects) hands a download to
    /// the HTTP server as a file range, since HTTPKit's response body is bytes or one file range,
    /// not a stream. Only the bytes of `range` are fetched and written (a `Range` request of ten
    /// bytes copies ten bytes, not its whole segment). The price is one local copy per download;
    /// the footprint stays bounded.
    ///
    /// - Throws: `BlockStoreError.io` when `range` is not within the segments' bytes.
    func spool(_ segments: [Segment], range: Range<Int64>, in scratchDirectory: URL) throws -> FileRange {
        let pieces = try Segment.pieces(of: range, in: segments)
        try FileManager.default.createDirectory(at: scratchDirectory, withIntermediateDirectories: true)
        let file = scratchDirectory.appendingPathComponent("download-" + Hex.encode(SecureRandom.bytes(12)))
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw BlockStoreError.io(nil, reason: "cannot create \(file.path)")
        }
        defer { try? FileManager.default.removeItem(at: file) }
        let writer = try FileHandle(forWritingTo: file)
        defer { try? writer.close() }
        for (blob, inner) in pieces {
            try forEachChunk(of: blob, range: inner, size: 1 << 20) { piece in
                try writer.write(contentsOf: Data(piece))
            }
        }
        let reader = try FileHandle(forReadingFrom: file)
        defer { try? reader.close() }
        // The handle closes its own descriptor; the range's is a duplicate.
        let descriptor = dup(reader.fileDescriptor)
        guard descriptor >= 0 else { throw BlockStoreError.io(nil, reason: "dup failed") }
        return FileRange(descriptor: descriptor, offset: 0, length: UInt64(range.count))
    }
}

extension Segment {
    /// The blobs `range` of `segments` joined in order touches, each with the range inside it.
    ///
    /// - Throws: `BlockStoreError.io` when `range` reaches outside the segments' bytes (an object
    ///   whose size and manifest disagree).
    static func pieces(of range: Range<Int64>, in segments: [Segment]) throws -> [(BlobID, Range<Int64>)] {
        let total = segments.reduce(Int64(0)) { $0 + $1.length }
        guard range.lowerBound >= 0, range.upperBound <= total else {
            throw BlockStoreError.io(nil, reason: "range \(range) outside the \(total) bytes of the segments")
        }
        var pieces: [(BlobID, Range<Int64>)] = []
        var offset: Int64 = 0
        for segment in segments {
            let start = max(range.lowerBound, offset), end = min(range.upperBound, offset + segment.length)
            if start < end { pieces.append((segment.blob, (start - offset)..<(end - offset))) }
            offset += segment.length
        }
        return pieces
    }
}
