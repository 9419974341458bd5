/// What `ObjectIndex.putObject` and `MultipartIndex.completeUpload` do when the key already holds an object.
public enum PutMode: Sendable, Equatable {
    /// Replace it atomically (the default of a `bucket:key` scope).
    case replace
    /// Refuse with `UpIndexError.objectExists` (PutPolicy `insertOnly`, qiniu-protocol.md §1.3
    /// and Appendix A.6). Checked inside the write transaction, so two racing uploads cannot
    /// both win.
    case insertOnly
}
