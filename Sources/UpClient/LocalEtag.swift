import UpCore

/// The v1 etag (qiniu-protocol.md §7.1) of a file, read 1 MiB at a time.
///
/// The upload computes it in a task of its own, alongside the requests, instead of from the
/// chunks it sends: chunks go out of order, some are re-sent, and a resume skips what was sent
/// before, so one sequential pass is the simple way to hash every byte exactly once.
enum LocalEtag {
    /// Hashes `length` bytes of `path`; checks for cancellation between pieces. With
    /// `partSize` (v2), the hash of an object made of parts of that size (§7.2: the v1 etag for
    /// 4 MiB parts, qshell's `EtagV2` otherwise).
    static func compute(path: String, length: Int64, partSize: Int64? = nil) throws(UploadError) -> String {
        guard let partSize, length > 0 else { return try hash(path: path, from: 0, length: length).etag }
        var parts: [Etag.Part] = []
        var start: Int64 = 0
        while start < length {
            let size = min(partSize, length - start)
            parts.append(Etag.Part(digest: try hash(path: path, from: start, length: size).partDigest, size: size))
            start += size
        }
        return Etag.v2(parts: parts)
    }

    private static func hash(path: String, from start: Int64, length: Int64) throws(UploadError) -> EtagHasher.Result {
        var hasher = EtagHasher()
        var offset: Int64 = 0
        while offset < length {
            if Task.isCancelled { throw UploadError(.paused, "etag computation cancelled") }
            let piece = min(Int64(FileRegion.pieceSize), length - offset)
            hasher.update(try FileRegion.read(path: path, offset: start + offset, length: piece))
            offset += piece
        }
        return hasher.finalize()
    }
}
