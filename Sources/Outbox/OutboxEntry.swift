/// A message to put into an outbox.
///
/// The outbox does not read `payload`: each service encodes what its sender needs (up-server:
/// the callback request and the object it is about; biz-server: a webhook), usually as JSON.
public struct OutboxMessage: Sendable, Hashable {
    /// What the sender needs to deliver the message.
    public var payload: String
    /// How long a claim holds the message: longer than any one attempt can take (e.g. every URL's
    /// timeout), so a live owner is never taken over mid-attempt.
    public var leaseSeconds: Int64
    /// The owner that tries the message at once, in the request that created it, if any: the
    /// message is then born claimed by it (``OutboxDelivery/born(now:leaseSeconds:claimedBy:)``).
    public var claimedBy: String?
    /// Seconds after the enqueue before the first attempt of a message not born claimed (a
    /// webhook schedule's first element); 0: due at once.
    public var delaySeconds: Int64

    /// Creates a message.
    public init(payload: String, leaseSeconds: Int64, claimedBy: String? = nil, delaySeconds: Int64 = 0) {
        self.payload = payload
        self.leaseSeconds = leaseSeconds
        self.claimedBy = claimedBy
        self.delaySeconds = delaySeconds
    }
}

/// A message in an outbox, with its delivery state.
public struct OutboxEntry: Sendable, Hashable {
    /// Sequence number: insertion order, unique within one outbox.
    public var id: Int64
    /// The message's payload, as enqueued.
    public var payload: String
    /// The claim's length for this message (see ``OutboxMessage/leaseSeconds``).
    public var leaseSeconds: Int64
    /// Where delivery stands.
    public var delivery: OutboxDelivery
    /// What went wrong the last time, if an attempt failed.
    public var lastError: String?
    /// The receiver's answer once delivered.
    public var reply: String?
    /// Unix seconds of the enqueue.
    public var createdAt: Int64

    /// Creates an entry description.
    public init(
        id: Int64, payload: String, leaseSeconds: Int64, delivery: OutboxDelivery, lastError: String? = nil,
        reply: String? = nil, createdAt: Int64
    ) {
        self.id = id
        self.payload = payload
        self.leaseSeconds = leaseSeconds
        self.delivery = delivery
        self.lastError = lastError
        self.reply = reply
        self.createdAt = createdAt
    }

    /// The entry a store holds right after enqueuing `message` at `now` under `id`.
    public static func enqueued(_ message: OutboxMessage, id: Int64, now: Int64) -> OutboxEntry {
        OutboxEntry(
            id: id, payload: message.payload, leaseSeconds: message.leaseSeconds,
            delivery: .born(
                now: now, leaseSeconds: message.leaseSeconds, claimedBy: message.claimedBy,
                delaySeconds: message.delaySeconds),
            createdAt: now)
    }

    /// Attempts begun so far.
    public var attempts: Int { delivery.attempts }
}

/// What an attempt came to, as recorded with the new state.
public enum OutboxOutcome: Sendable, Hashable {
    /// The receiver acknowledged; `reply` is kept with the entry.
    case delivered(reply: String)
    /// The attempt failed for `reason` (kept as the entry's last error; no secrets in it).
    case failed(reason: String)
    /// The attempt failed for `reason` and no retry can mend it: the entry is dead at once
    /// (``OutboxDelivery/Event/abandoned(owner:)``).
    case abandoned(reason: String)

    /// The reason of a failed or abandoned attempt; nil when delivered.
    public var failureReason: String? {
        switch self {
        case .delivered: nil
        case .failed(let reason), .abandoned(let reason): reason
        }
    }
}
