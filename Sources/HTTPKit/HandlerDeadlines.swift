import Synchronization

/// The deadlines of every handler running in a task, kept by a table and a few timers.
///
/// A handler that runs in a task gets a deadline: when it passes, the request is answered 503
/// and its task cancelled (``ExchangeProcessor``). A timer of its own per request (a task
/// sleeping until the deadline, cancelled when the handler returns) cost each request a
/// `dispatch_after` that woke libdispatch's manager thread through an eventfd, its cancellation
/// another, and two tasks more: on biz-server's PostgreSQL token route (its one async route
/// under load) that was a fifth to a half of its CPU per request (README, Performance). Here a
/// request's deadline is an entry in a table (a lock and a hash insert, and a remove when it
/// ends), and one sleeping task per shard (below) wakes for its earliest deadline. Deadlines
/// mostly come in the order they are set (one timeout per route), so a new one rarely moves the
/// wake-up; when the earliest request ends first, the sleeper wakes for nothing, finds the next
/// earliest and sleeps again.
///
/// A request's entry is set in two steps, because the expiry action needs the task and the task
/// must be able to end its deadline before the action is known: ``reserve()`` before the task
/// is created, ``arm(_:after:expire:)`` after, ``end(_:)`` when the handler is done (in its
/// task, possibly before `arm`: then `arm` sets nothing).
///
/// The table is split into ``shardCount`` shards by ticket, each with its own lock and sleeper:
/// with one lock for all, `perf` on the PostgreSQL token route found every worker thread
/// queueing for it (`Mutex._lockSlow` 5 % of biz-server's samples, more in the kernel's futex
/// path), since every request takes it three times.
final class HandlerDeadlines: Sendable {
    /// One request's place in the table.
    struct Ticket: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    /// Shards of the table: enough that the threads running handlers (libdispatch's pool, about
    /// one per core) seldom meet on one; each costs a lock and, while it holds deadlines, one
    /// sleeping task.
    static let shardCount = 16

    private let shards: [Shard]
    private let nextID = Atomic<UInt64>(0)

    init() {
        shards = (0..<Self.shardCount).map { _ in Shard() }
    }

    /// Deadlines armed and not yet ended or expired (tests).
    var count: Int { shards.reduce(0) { $0 + $1.count } }

    /// A ticket for a request whose deadline is armed next.
    func reserve() -> Ticket {
        let ticket = Ticket(id: nextID.wrappingAdd(1, ordering: .relaxed).newValue)
        shard(of: ticket).reserve(ticket.id)
        return ticket
    }

    /// Calls `expire` (once, on the timer's task) `timeout` from now unless ``end(_:)`` comes
    /// first; nothing if it already came.
    func arm(_ ticket: Ticket, after timeout: Duration, expire: @escaping @Sendable () -> Void) {
        shard(of: ticket).arm(ticket.id, at: ContinuousClock.now + timeout, expire: expire)
    }

    /// The request is done: its deadline will not expire.
    func end(_ ticket: Ticket) {
        shard(of: ticket).end(ticket.id)
    }

    private func shard(of ticket: Ticket) -> Shard {
        shards[Int(ticket.id % UInt64(Self.shardCount))]
    }
}

/// One shard of ``HandlerDeadlines``: its entries and the task that sleeps until the earliest.
private final class Shard: Sendable {
    private struct Entry {
        let deadline: ContinuousClock.Instant
        let expire: @Sendable () -> Void
    }

    private struct State {
        /// Reserved and neither armed nor ended yet.
        var reserved: Set<UInt64> = []
        var armed: [UInt64: Entry] = [:]
        /// When the sleeper wakes; nil when none sleeps.
        var wake: ContinuousClock.Instant?
        /// Which sleeper is the current one: a replaced sleeper that wakes anyway does nothing.
        var generation: UInt64 = 0
        var sleeper: Task<Void, Never>?
    }

    private let state = Mutex(State())

    var count: Int { state.withLock { $0.armed.count } }

    func reserve(_ id: UInt64) {
        _ = state.withLock { $0.reserved.insert(id) }
    }

    func arm(_ id: UInt64, at deadline: ContinuousClock.Instant, expire: @escaping @Sendable () -> Void) {
        state.withLock { state in
            guard state.reserved.remove(id) != nil else { return }
            state.armed[id] = Entry(deadline: deadline, expire: expire)
            if let wake = state.wake, wake <= deadline { return }
            schedule(at: deadline, in: &state)
        }
    }

    func end(_ id: UInt64) {
        state.withLock { state in
            if state.armed.removeValue(forKey: id) == nil { state.reserved.remove(id) }
        }
    }

    /// Replaces the sleeper by one that wakes at `instant`.
    private func schedule(at instant: ContinuousClock.Instant, in state: inout State) {
        state.generation &+= 1
        state.sleeper?.cancel()
        state.wake = instant
        let generation = state.generation
        state.sleeper = Task { [weak self] in
            // Cancelled only when replaced, and then the generation no longer matches.
            try? await Task.sleep(until: instant, clock: .continuous)
            self?.expireDue(generation: generation)
        }
    }

    /// Removes and calls every entry past its deadline, and sleeps until the next one.
    private func expireDue(generation: UInt64) {
        let due = state.withLock { state -> [Entry] in
            guard state.generation == generation else { return [] }
            let now = ContinuousClock.now
            var dueIDs: [UInt64] = []
            var next: ContinuousClock.Instant?
            for (id, entry) in state.armed {
                if entry.deadline <= now {
                    dueIDs.append(id)
                } else if next.map({ entry.deadline < $0 }) ?? true {
                    next = entry.deadline
                }
            }
            let due = dueIDs.compactMap { state.armed.removeValue(forKey: $0) }
            if let next {
                schedule(at: next, in: &state)
            } else {
                state.wake = nil
                state.sleeper = nil
            }
            return due
        }
        for entry in due { entry.expire() }
    }
}
