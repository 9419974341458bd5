/// What an upload is about to do, reported once before its first upload request (after the
/// token is known and the checkpoint was looked at), so a caller can say "resuming" or
/// "starting over, because …" before any byte goes out.
public struct UploadStart: Sendable {
    /// The up hosts the upload uses, in the order they are tried (a resumed upload's host
    /// first): the configured ones, else those biz-server handed out with the token.
    public var upHosts: [String]
    /// The protocol chosen: ``UploadProtocol/form``, ``UploadProtocol/v1`` or ``UploadProtocol/v2``.
    public var uploadProtocol: UploadProtocol
    /// The file size.
    public var size: Int64
    /// Whether a checkpoint is resumed.
    public var resumed: Bool
    /// Bytes the resumed checkpoint records as acknowledged (they are not sent again); 0 otherwise.
    public var resumedBytes: Int64
    /// Why an existing checkpoint is not used (the file changed, settings differ, expired,
    /// corrupt): it was removed and the upload starts over. Nil when there was none or it is used.
    public var checkpointNote: String?

    /// Creates a report; see each property.
    public init(
        upHosts: [String], uploadProtocol: UploadProtocol, size: Int64, resumed: Bool, resumedBytes: Int64,
        checkpointNote: String?
    ) {
        self.upHosts = upHosts
        self.uploadProtocol = uploadProtocol
        self.size = size
        self.resumed = resumed
        self.resumedBytes = resumedBytes
        self.checkpointNote = checkpointNote
    }
}
