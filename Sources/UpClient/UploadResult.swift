/// What a finished upload returns.
public struct UploadResult: Sendable {
    /// The final key, from the server's reply (`key`), or the key asked for.
    public var key: String?
    /// The object hash (etag), checked equal to the one computed locally.
    public var hash: String
    /// The file size.
    public var size: Int64
    /// The final reply's body: the biz-server callback answer relayed by up-server, or the
    /// returnBody / `{"hash","key"}` without a callback.
    public var reply: [UInt8]
    /// Time from the call to the final reply.
    public var duration: Duration
    /// Whether a valid checkpoint was used.
    public var resumed: Bool
    /// Body bytes sent by this call (retries included); with a resume, less than ``size``.
    public var bytesSent: Int64
    /// Why an existing checkpoint was not used (file changed, settings differ, expired,
    /// corrupt), when that happened; nil otherwise.
    public var checkpointNote: String?

    /// Creates a result.
    public init(
        key: String?, hash: String, size: Int64, reply: [UInt8], duration: Duration, resumed: Bool, bytesSent: Int64,
        checkpointNote: String? = nil
    ) {
        self.key = key
        self.hash = hash
        self.size = size
        self.reply = reply
        self.duration = duration
        self.resumed = resumed
        self.bytesSent = bytesSent
        self.checkpointNote = checkpointNote
    }
}
