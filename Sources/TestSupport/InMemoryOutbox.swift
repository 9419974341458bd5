public import Outbox
import Synchronization

/// The in-memory twin of `SQLiteOutbox`: the same ``OutboxStore`` contract (one suite checks
/// both), with every transition taken by ``OutboxDelivery`` itself, so the twin *is* the rule the
/// SQL statements mirror. Nothing survives the process.
///
/// A host twin (the up-server's in-memory index) enqueues with ``insert(_:now:)``, synchronously,
/// as the last step of its own all-or-nothing change.
public final class InMemoryOutbox: OutboxStore {
    private struct State {
        var entries: [Int64: OutboxEntry] = [:]
        var lastID: Int64 = 0
    }

    private let state = Mutex(State())
    /// Only `requeue` consults a schedule, and only to reset it.
    private static let unused = OutboxDelivery.Schedule(maxAttempts: 1, firstDelay: 0, maxDelay: 0)

    /// An empty outbox.
    public init() {}

    /// Adds `message` at `now` at once (see `SQLiteOutbox.insert`).
    @discardableResult
    public func insert(_ message: OutboxMessage, now: Int64) -> OutboxEntry {
        state.withLock { state in
            state.lastID += 1
            let entry = OutboxEntry.enqueued(message, id: state.lastID, now: now)
            state.entries[entry.id] = entry
            return entry
        }
    }

    /// See `OutboxStore.enqueue(_:now:)`.
    public func enqueue(_ message: OutboxMessage, now: Int64) async throws -> OutboxEntry { insert(message, now: now) }

    /// See `OutboxStore.claimDue(owner:now:limit:)`.
    public func claimDue(owner: String, now: Int64, limit: Int) async throws -> [OutboxEntry] {
        state.withLock { state in
            let due = state.entries.values.filter { $0.delivery.isClaimable(now: now) }
                .sorted { (Self.availableAt($0), $0.id) < (Self.availableAt($1), $1.id) }
                .prefix(max(0, limit))
            return due.map { entry in
                var claimed = entry
                _ = claimed.delivery.handle(
                    .claim(owner: owner, now: now, leaseSeconds: entry.leaseSeconds), schedule: Self.unused)
                state.entries[entry.id] = claimed
                return claimed
            }
        }
    }

    /// See `OutboxStore.expedite(_:owner:now:)`.
    public func expedite(_ id: Int64, owner: String, now: Int64) async throws -> OutboxEntry? {
        state.withLock { state in
            guard var entry = state.entries[id],
                case .send = entry.delivery.handle(
                    .expedite(owner: owner, now: now, leaseSeconds: entry.leaseSeconds), schedule: Self.unused)
            else { return nil }
            state.entries[id] = entry
            return entry
        }
    }

    /// See `OutboxStore.record(_:claimedBy:as:outcome:)`.
    public func record(_ id: Int64, claimedBy owner: String, as delivery: OutboxDelivery, outcome: OutboxOutcome)
        async throws -> Bool
    {
        state.withLock { state in
            guard var entry = state.entries[id], case .claimed(owner, _) = entry.delivery.state else { return false }
            entry.delivery = delivery
            switch outcome {
            case .delivered(let reply): entry.reply = reply
            case .failed(let reason): entry.lastError = reason
            }
            state.entries[id] = entry
            return true
        }
    }

    /// See `OutboxStore.requeue(_:now:)`.
    public func requeue(_ id: Int64, now: Int64) async throws -> OutboxEntry? {
        state.withLock { state in
            guard var entry = state.entries[id],
                case .record = entry.delivery.handle(.requeue(now: now), schedule: Self.unused)
            else { return nil }
            state.entries[id] = entry
            return entry
        }
    }

    /// See `OutboxStore.entry(id:)`.
    public func entry(id: Int64) async throws -> OutboxEntry? { state.withLock { $0.entries[id] } }

    /// See `OutboxStore.list(_:before:limit:)`.
    public func list(_ phases: Set<OutboxDelivery.Phase>, before: Int64?, limit: Int) async throws -> [OutboxEntry] {
        state.withLock { state in
            Array(
                state.entries.values.filter { phases.contains($0.delivery.state.phase) && $0.id < (before ?? .max) }
                    .sorted { $0.id > $1.id }.prefix(max(0, limit)))
        }
    }

    /// See `OutboxStore.depth()`.
    public func depth() async throws -> Int {
        state.withLock { $0.entries.values.count { [.pending, .claimed].contains($0.delivery.state.phase) } }
    }

    /// When an entry can next be claimed (the SQLite table's `available_at`).
    private static func availableAt(_ entry: OutboxEntry) -> Int64 {
        switch entry.delivery.state {
        case .pending(let dueAt): dueAt
        case .claimed(_, let leaseUntil): leaseUntil
        case .delivered, .dead: .max
        }
    }
}
