/// The ways an object can be uploaded (qiniu-protocol.md §4–§6). They differ in one put-policy
/// rule — whether a bucket-only scope may overwrite (``PutPolicy/allowsOverwrite(through:)``) —
/// and the raw value names them in metrics (`protocol` label).
public enum UploadKind: String, Sendable, CaseIterable {
    /// `POST /` multipart form (§6).
    case form
    /// v1 resumable: mkblk/bput, then mkfile or rs-mkfile (§4.1–§4.4).
    case resumableV1 = "v1"
    /// v1 single request: `/put`, `/putb64` (§4.5).
    case singlePut = "v1-put"
    /// v2 multipart: init, parts, complete (§5).
    case multipartV2 = "v2"
}
