/// Where an outbox lives: the role both servers' durable deliveries need (up-server's callbacks,
/// biz-server's webhooks), small enough to implement three times — the in-memory twin
/// (TestSupport), SQLite (``SQLiteOutbox``), PostgreSQL — and checked by one contract suite.
///
/// The store applies ``OutboxDelivery``'s transitions as conditional writes, so several
/// processes can share one outbox: ``claimDue(owner:now:limit:)`` takes only claimable entries
/// (on PostgreSQL `SELECT … FOR UPDATE SKIP LOCKED` inside the same `UPDATE … RETURNING`), and
/// ``record(_:claimedBy:as:outcome:)`` writes only while the caller still holds the claim. Times
/// are Unix seconds, passed in (no clock inside). Messages are enqueued by the service's own
/// store, in the transaction that creates what they are about (the SQLite implementation offers
/// ``SQLiteOutbox/insert(_:now:into:in:)`` for that), or with ``enqueue(_:now:)``.
public protocol OutboxStore: Sendable {
    /// Adds `message` at `now` in a transaction of its own.
    ///
    /// - Returns: The entry as stored.
    func enqueue(_ message: OutboxMessage, now: Int64) async throws -> OutboxEntry

    /// Claims for `owner` up to `limit` entries that are claimable at `now`
    /// (``OutboxDelivery/isClaimable(now:)``), earliest due first (then by id), applying
    /// ``OutboxDelivery/Event/claim(owner:now:leaseSeconds:)`` with each entry's own lease.
    /// Two owners claiming at once never get the same entry.
    ///
    /// - Returns: The claimed entries, in that order.
    func claimDue(owner: String, now: Int64, limit: Int) async throws -> [OutboxEntry]

    /// Claims entry `id` for `owner` at once, ahead of its schedule
    /// (``OutboxDelivery/Event/expedite(owner:now:leaseSeconds:)``): pending (due or not), or
    /// claimed with the lease run out. Two owners asking at once never both get it.
    ///
    /// - Returns: The claimed entry; `nil` (nothing written) if there is no entry `id`, it is
    ///   delivered or dead, or another claim's lease still runs.
    func expedite(_ id: Int64, owner: String, now: Int64) async throws -> OutboxEntry?

    /// Records the outcome of `owner`'s attempt: `delivery` is the machine's state after
    /// ``OutboxDelivery/Event/succeeded(owner:)`` or ``OutboxDelivery/Event/failed(owner:now:)``,
    /// written only if the entry is still claimed by `owner`.
    ///
    /// - Returns: `false` (nothing written) if `owner` no longer holds the claim — its lease ran
    ///   out and another owner took the entry over — or there is no entry `id`.
    func record(_ id: Int64, claimedBy owner: String, as delivery: OutboxDelivery, outcome: OutboxOutcome)
        async throws -> Bool

    /// Moves a dead entry back to pending, due at `now`, with a fresh schedule
    /// (``OutboxDelivery/Event/requeue(now:)``).
    ///
    /// - Returns: The entry after the change; `nil` if there is no entry `id` or it is not dead.
    func requeue(_ id: Int64, now: Int64) async throws -> OutboxEntry?

    /// The entry with `id`, if any.
    func entry(id: Int64) async throws -> OutboxEntry?

    /// Entries in any of `phases`, newest first, with ids below `before` when given, at most
    /// `limit` (listings, e.g. a dead-letter view).
    func list(_ phases: Set<OutboxDelivery.Phase>, before: Int64?, limit: Int) async throws -> [OutboxEntry]

    /// How many entries are still to be delivered (pending or claimed).
    func depth() async throws -> Int
}
