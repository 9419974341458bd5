import UpCore

/// The v1 etag (qiniu-protocol.md §7.1) of a file, read 1 MiB at a time.
///
/// The upload computes it in a task of its own, alongside the requests, instead of from the
/// chunks it sends: chunks go out of order, some are re-sent, and a resume skips what was sent
/// before, so one sequential pass is the simple way to hash every byte exactly once.
enum LocalEtag {
    /// Hashes `length` bytes of `path`; checks for cancellation between pieces.
    static func compute(path: String, length: Int64) throws(UploadError) -> String {
        var hasher = EtagHasher()
        var offset: Int64 = 0
        while offset < length {
            if Task.isCancelled { throw UploadError(.paused, "etag computation cancelled") }
            let piece = min(Int64(FileRegion.pieceSize), length - offset)
            hasher.update(try FileRegion.read(path: path, offset: offset, length: piece))
            offset += piece
        }
        return hasher.finalize().etag
    }
}
