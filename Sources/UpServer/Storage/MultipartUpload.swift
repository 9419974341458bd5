/// A v2 multipart upload (qiniu-protocol.md §5).
public struct MultipartUpload: Sendable, Equatable {
    /// Where an upload stands. Only `active` accepts parts, complete or abort.
    public enum State: String, Sendable, CaseIterable {
        /// Accepting parts.
        case active
        /// Completed: the id is no longer valid (§5: "After a successful complete, the uploadId
        /// becomes invalid").
        case completed
        /// Aborted by the client.
        case aborted
    }

    /// The uploadId: 32 hex characters from `SecureRandom`.
    public var id: String
    /// The bucket from the init path.
    public var bucket: String
    /// The key from the init path, `nil` for `~` (key decided at complete).
    public var key: String?
    /// The advertised `expireAt` (Unix seconds); honoured until then (§9.6).
    public var expiresAt: Int64
    /// Unix seconds of init.
    public var createdAt: Int64
    /// See `State`.
    public var state: State

    /// Creates an upload description.
    public init(id: String, bucket: String, key: String?, expiresAt: Int64, createdAt: Int64, state: State) {
        self.id = id
        self.bucket = bucket
        self.key = key
        self.expiresAt = expiresAt
        self.createdAt = createdAt
        self.state = state
    }

    /// Whether parts, complete and abort are still accepted at `now` (Unix seconds).
    public func isUsable(now: Int64) -> Bool { state == .active && now < expiresAt }
}
