/// Why an upload did not finish: one typed error for the whole client.
public struct UploadError: Error, Sendable, CustomStringConvertible {
    /// The class of failure; what callers (and `up-cli`'s exit codes) branch on.
    public enum Kind: Sendable, Equatable {
        /// ``UploadControl/pause()`` (or cancellation of the calling task) stopped the upload;
        /// the checkpoint, if any, is kept (``UploadError/savedBytes`` says how much it holds).
        case paused
        /// ``UploadControl/abort()`` stopped the upload; the checkpoint is gone.
        case aborted
        /// The server answered with this status (Qiniu's: 400, 403, 413, 614, 701, 5xx…) and
        /// retrying could not help or retries ran out.
        case server(status: Int)
        /// No response arrived from any up host (or from biz-server) within the retries.
        case network
        /// The checkpoint file cannot be written, or is locked by another upload.
        case checkpoint
        /// The local file cannot be read (missing, unreadable, not a regular file).
        case file
        /// The file changed (size, modification time or inode; on resume also the content the
        /// checkpoint recorded) after the upload began: nothing was completed, the checkpoint is
        /// removed and a v2 upload is aborted. Upload the file again once it is stable.
        case fileChanged
        /// A reply's crc32 kept differing, or the final hash differs from the etag of the bytes sent.
        case integrity
        /// No usable token: biz-server refused one (4xx), a fixed token is malformed, or the up
        /// host refused the token (401, or 403 "key doesn't match with scope").
        case token
        /// The object is stored, but the app's callback failed (579): up-server keeps the
        /// callback in its outbox and delivers it later. ``UploadError/result`` holds the stored
        /// object (key, hash, size; `reply` is the 579 body). Not a failed upload: do not upload again.
        case callbackFailed
    }

    /// The class of failure.
    public var kind: Kind
    /// What happened, for people: the server's `error` text when there is one.
    public var message: String
    /// The server's `X-Reqid` of the failing response, when there was one.
    public var requestID: String?
    /// For ``Kind/callbackFailed``: the stored object, as a successful upload would return it.
    public var result: UploadResult?
    /// For a stop that keeps the checkpoint (``Kind/paused``, and failures after which it is
    /// kept): the bytes the checkpoint records as acknowledged, i.e. what a resume skips; nil
    /// without a checkpoint.
    public var savedBytes: Int64?

    /// Creates an error.
    public init(_ kind: Kind, _ message: String, requestID: String? = nil) {
        self.kind = kind
        self.message = message
        self.requestID = requestID
    }

    /// `<kind>: <message> (reqid <id>)`.
    public var description: String {
        "\(kind.name): \(message)" + (requestID.map { " (reqid \($0))" } ?? "")
    }
}

extension UploadError.Kind {
    /// A short, stable name (`paused`, `server 701`, `network`, …) for messages and JSON output.
    public var name: String {
        switch self {
        case .paused: "paused"
        case .aborted: "aborted"
        case .server(let status): "server \(status)"
        case .network: "network"
        case .checkpoint: "checkpoint"
        case .file: "file"
        case .fileChanged: "file changed"
        case .integrity: "integrity"
        case .token: "token"
        case .callbackFailed: "callback failed"
        }
    }
}
