/// Why an upload did not finish: one typed error for the whole client.
public struct UploadError: Error, Sendable, CustomStringConvertible {
    /// The class of failure; what callers (and `up-cli`'s exit codes) branch on.
    public enum Kind: Sendable, Equatable {
        /// ``UploadControl/pause()`` (or cancellation of the calling task) stopped the upload;
        /// the checkpoint, if any, is kept.
        case paused
        /// ``UploadControl/abort()`` stopped the upload; the checkpoint is gone.
        case aborted
        /// The server answered with this status (Qiniu's: 401, 403, 413, 579, 614, 701, 5xx…)
        /// and retrying could not help or retries ran out.
        case server(status: Int)
        /// No response arrived from any up host (or biz-server) within the retries.
        case network
        /// The checkpoint file cannot be written, or is locked by another upload.
        case checkpoint
        /// The local file cannot be read, or changed during the upload.
        case file
        /// A reply's crc32 kept differing, or the final hash differs from the local etag.
        case integrity
        /// No token: biz-server refused or failed, or a fixed token is malformed.
        case token
    }

    /// The class of failure.
    public var kind: Kind
    /// What happened, for people: the server's `error` text when there is one.
    public var message: String
    /// The server's `X-Reqid` of the failing response, when there was one.
    public var requestID: String?

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
        case .integrity: "integrity"
        case .token: "token"
        }
    }
}
