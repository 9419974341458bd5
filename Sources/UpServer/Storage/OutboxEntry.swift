/// A callback to deliver (DESIGN.md "Callbacks never get lost"; qiniu-protocol.md §3.1).
///
/// Written in the same transaction as its object, so an object never exists without its
/// callback and a callback never names an object that was not stored.
public struct NewOutboxEntry: Sendable, Equatable {
    /// `callbackUrl` candidates, tried in order (Appendix A.2: next URL on failure). Never empty.
    public var urls: [String]
    /// `callbackHost`, if the policy set one.
    public var host: String?
    /// The rendered callback body.
    public var body: String
    /// `callbackBodyType`.
    public var contentType: String
    /// The signature scheme to sign with at send time (e.g. `QBox`, `Qiniu`).
    public var authScheme: String
    /// Unix seconds when the background retrier may first pick it up: after the synchronous
    /// attempt's timeout, so the two do not race on a fresh entry.
    public var firstAttemptAt: Int64

    /// Creates an entry to enqueue.
    public init(
        urls: [String], host: String? = nil, body: String, contentType: String, authScheme: String,
        firstAttemptAt: Int64
    ) {
        self.urls = urls
        self.host = host
        self.body = body
        self.contentType = contentType
        self.authScheme = authScheme
        self.firstAttemptAt = firstAttemptAt
    }
}

/// A callback in the outbox.
public struct OutboxEntry: Sendable, Equatable {
    /// Where delivery stands.
    public enum State: String, Sendable, CaseIterable {
        /// Not acknowledged yet; retried when `nextAttemptAt` comes.
        case pending
        /// The biz-server answered 200; `reply` holds its body.
        case delivered
        /// Given up on; kept for the admin listing.
        case failed
    }

    /// Sequence number: insertion order.
    public var id: Int64
    /// The object's bucket.
    public var bucket: String
    /// The object's key.
    public var key: String
    /// The object's hash.
    public var etag: String
    /// The request to send.
    public var request: NewOutboxEntry
    /// Attempts made so far.
    public var attempts: Int
    /// Unix seconds of the next attempt (meaningful while `pending`).
    public var nextAttemptAt: Int64
    /// What went wrong last time, if anything.
    public var lastError: String?
    /// See `State`.
    public var state: State
    /// The biz-server's reply body once delivered.
    public var reply: String?

    /// Creates an entry description.
    public init(
        id: Int64, bucket: String, key: String, etag: String, request: NewOutboxEntry, attempts: Int,
        nextAttemptAt: Int64, lastError: String?, state: State, reply: String?
    ) {
        self.id = id
        self.bucket = bucket
        self.key = key
        self.etag = etag
        self.request = request
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
        self.state = state
        self.reply = reply
    }
}
