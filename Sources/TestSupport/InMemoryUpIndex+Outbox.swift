public import UpServer
extension InMemoryUpIndex {
    /// See `UpIndex.dueCallbacks(now:limit:)`.
    public func dueCallbacks(now: Int64, limit: Int) -> [OutboxEntry] {
        let due = state.outbox.values.filter { $0.state == .pending && $0.nextAttemptAt <= now }
            .sorted { ($0.nextAttemptAt, $0.id) < ($1.nextAttemptAt, $1.id) }
        return Array(due.prefix(max(0, limit)))
    }

    /// See `UpIndex.outboxEntry(id:)`.
    public func outboxEntry(id: Int64) -> OutboxEntry? { state.outbox[id] }

    /// See `UpIndex.markDelivered(_:reply:)`.
    public func markDelivered(_ id: Int64, reply: String) throws {
        guard var entry = state.outbox[id] else { throw UpIndexError.notFound }
        entry.attempts += 1
        entry.state = .delivered
        entry.reply = reply
        state.outbox[id] = entry
    }

    /// See `UpIndex.markAttemptFailed(_:error:nextAttemptAt:)`.
    public func markAttemptFailed(_ id: Int64, error: String, nextAttemptAt: Int64?) throws {
        guard var entry = state.outbox[id] else { throw UpIndexError.notFound }
        entry.attempts += 1
        entry.lastError = error
        if let nextAttemptAt {
            entry.nextAttemptAt = nextAttemptAt
            entry.state = .pending
        } else {
            entry.state = .failed
        }
        state.outbox[id] = entry
    }

    /// See `UpIndex.outboxDepth()`.
    public func outboxDepth() -> Int { state.outbox.values.count { $0.state == .pending } }

    /// See `UpIndex.listOutbox(state:limit:)`.
    public func listOutbox(state wanted: OutboxEntry.State, limit: Int) -> [OutboxEntry] {
        Array(state.outbox.values.filter { $0.state == wanted }.sorted { $0.id > $1.id }.prefix(max(0, limit)))
    }
}
