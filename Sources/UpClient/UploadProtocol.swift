/// Which upload protocol ``UploadClient`` uses.
public enum UploadProtocol: String, Sendable, Codable {
    /// Form upload at or below ``UploadClient/Configuration/formThreshold``, v1 resumable above.
    case automatic
    /// One multipart/form-data `POST /` (qiniu-protocol.md §6); the body is built in memory.
    case form
    /// v1 resumable: mkblk / bput / mkfile (§4).
    case v1
    /// v2 multipart: init / upload part / complete (§5).
    case v2
}
