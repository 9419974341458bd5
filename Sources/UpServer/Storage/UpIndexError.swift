/// Why an index call (`BlockIndex`, `MultipartIndex`, `ObjectIndex`) was refused (storage failures surface as the backend's own errors).
public enum UpIndexError: Error, Equatable, Sendable {
    /// The upload id is unknown, aborted, completed, expired or bound to another bucket/key:
    /// the handler answers `612 {"error":"no such uploadId"}` (qiniu-protocol.md §5).
    case noSuchUpload
    /// A part named in complete does not match the stored one (number, etag or blob).
    case partMismatch(partNumber: Int)
    /// `PutMode.insertOnly` and the key already holds an object (614).
    case objectExists
    /// There is no row with this id.
    case notFound
    /// The arguments break an invariant (e.g. an offset past the block size).
    case invalidArgument(String)
}
