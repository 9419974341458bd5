import Synchronization

/// The deadlines of every handler running in a task, kept by one timer.
///
/// A handler that runs in a task gets a deadline: when it passes, the request is answered 503
/// and its task cancelled (``ExchangeProcessor``). A timer of its own per request (a task
/// sleeping until the deadline, cancelled when the handler returns) cost each request a
/// `dispatch_after` that woke libdispatch's manager thread through an eventfd, its cancellation
/// another, and two tasks more: on biz-server's PostgreSQL token route (its one async route
/// under load) that was a fifth to a half of its CPU per request (README, Performance). Here a
/// request's deadline is an entry in a table (a lock and a hash insert, and a remove when it
/// ends), and one sleeping task wakes for the earliest deadline. Deadlines mostly come in the order they are
/// set (one timeout per route), so a new one rarely moves the wake-up; when the earliest request
/// ends first, the sleeper wakes for nothing, finds the next earliest and sleeps again.
///
/// A request's entry is set in two steps, because the expiry action needs the task and the task
/// must be able to end its deadline before the action is known: ``reserve()`` before the task
/// is created, ``arm(_:after:expire:)`` after, ``end(_:)`` when the handler is done (in its
/// task, possibly before `arm`: then `arm` sets nothing).
final class HandlerDeadlines: Sendable {
    /// One request's place in the table.
    struct Ticket: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    private struct Entry {
        let deadline: ContinuousClock.Instant
        let expire: @Sendable () -> Void
    }

    private struct State {
        var nextID: UInt64 = 0
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

    /// Deadlines armed and not yet ended or expired (tests).
    var count: Int { state.withLock { $0.armed.count } }

    /// A ticket for a request whose deadline is armed next.
    func reserve() -> Ticket {
        state.withLock { state in
            state.nextID &+= 1
            state.reserved.insert(state.nextID)
            return Ticket(id: state.nextID)
        }
    }

    /// Calls `expire` (once, on the timer's task) `timeout` from now unless ``end(_:)`` comes
    /// first; nothing if it already came.
    func arm(_ ticket: Ticket, after timeout: Duration, expire: @escaping @Sendable () -> Void) {
        let deadline = ContinuousClock.now + timeout
        state.withLock { state in
            guard state.reserved.remove(ticket.id) != nil else { return }
            state.armed[ticket.id] = Entry(deadline: deadline, expire: expire)
            if let wake = state.wake, wake <= deadline { return }
            schedule(at: deadline, in: &state)
        }
    }

    /// The request is done: its deadline will not expire.
    func end(_ ticket: Ticket) {
        state.withLock { state in
            if state.armed.removeValue(forKey: ticket.id) == nil { state.reserved.remove(ticket.id) }
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
