/// The connection pool's decisions, without I/O: events in (a caller wants a connection, a
/// connect finished or failed, a connection came back, a wait timed out), decisions out. Time
/// is passed in. ``PostgresPool`` carries the decisions out; this is what its unit tests drive.
///
/// Rules:
/// - At most `maxConnections` exist, counting idle, leased and being-connected ones. Idle
///   connections are reused newest first (the oldest may be closed by the server first).
/// - A connection that comes back healthy goes straight to the longest waiter.
/// - A failed connect means the server may be down: the next attempt waits `initialBackoff`,
///   doubling per consecutive failure up to `maxBackoff`, and only one attempt (a probe) runs
///   at a time; other callers wait for its outcome, or fail at once with the connect error when
///   their deadline comes before the next attempt. The first successful connect ends it.
struct PostgresPoolState<Connection> {
    /// What a caller asking for a connection does next.
    enum Acquire {
        /// Use this idle connection (check it first: it may have died while idle).
        case use(Connection)
        /// Open a new connection, then report ``connected(now:)`` or ``connectFailed(_:now:)``.
        case connect
        /// Wait to be woken with a ``Wake`` (the caller is in the queue).
        case wait
        /// Sleep until this instant (the next connect attempt), then ask again.
        case retry(at: ContinuousClock.Instant)
        /// Give up with this error.
        case fail(PostgresError)
    }

    /// What a waiting caller is woken with.
    enum Wake {
        /// A connection handed over by the caller that returned it.
        case use(Connection)
        /// Something changed (a slot freed, a probe ended): ask again.
        case retry
        /// Give up with this error.
        case fail(PostgresError)
    }

    /// What the pool must do after an event.
    struct Actions {
        /// Connections to close (dropped or left after ``close()``).
        var close: [Connection] = []
        /// Waiters to wake, in order.
        var wake: [(waiter: UInt64, wake: Wake)] = []
    }

    let maxConnections: Int
    let initialBackoff: Duration
    let maxBackoff: Duration

    private(set) var idle: [Connection] = []
    private(set) var leased = 0
    private(set) var connecting = 0
    /// Callers waiting, longest-waiting first.
    private(set) var waiters: [UInt64] = []
    /// Connect attempts that failed since the last one that succeeded.
    private(set) var consecutiveFailures = 0
    /// Not before this instant may the next connect attempt start.
    private(set) var retryAt: ContinuousClock.Instant?
    /// Why the last connect attempt failed (nil once one succeeds).
    private(set) var lastConnectError: PostgresError?
    private(set) var isClosed = false

    init(maxConnections: Int, initialBackoff: Duration, maxBackoff: Duration) {
        self.maxConnections = max(1, maxConnections)
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
    }

    /// Connections that exist or are being opened.
    var openCount: Int { idle.count + leased + connecting }

    /// Caller `waiter` wants a connection at `now` and will wait until `deadline`.
    mutating func acquire(waiter: UInt64, now: ContinuousClock.Instant, deadline: ContinuousClock.Instant) -> Acquire {
        if isClosed { return .fail(Self.closed) }
        if let connection = idle.popLast() {
            leased += 1
            return .use(connection)
        }
        guard openCount < maxConnections else {
            waiters.append(waiter)
            return .wait
        }
        if consecutiveFailures > 0 {
            if connecting > 0 {
                waiters.append(waiter)
                return .wait
            }
            if let retryAt, now < retryAt, let lastConnectError {
                return deadline < retryAt ? .fail(lastConnectError) : .retry(at: retryAt)
            }
        }
        connecting += 1
        return .connect
    }

    /// The connect that ``acquire(waiter:now:deadline:)`` asked for succeeded; its caller leases it.
    mutating func connected() -> Actions {
        connecting -= 1
        leased += 1
        let recovered = consecutiveFailures > 0
        consecutiveFailures = 0
        retryAt = nil
        lastConnectError = nil
        // Callers queued behind the probe may connect now, as many as there is room for.
        return recovered ? wakeForFreeSlots() : Actions()
    }

    /// The connect that ``acquire(waiter:now:deadline:)`` asked for failed with `error`.
    mutating func connectFailed(_ error: PostgresError, now: ContinuousClock.Instant) -> Actions {
        connecting -= 1
        consecutiveFailures += 1
        lastConnectError = error
        let doublings = min(consecutiveFailures - 1, 30)
        retryAt = now + min(initialBackoff * (1 << doublings), maxBackoff)
        // Everyone waiting learns now: each either sleeps until the next attempt or fails.
        var actions = Actions()
        actions.wake = waiters.map { ($0, .retry) }
        waiters.removeAll()
        return actions
    }

    /// A leased connection came back; `reusable` is false when it broke or was left mid-transaction.
    mutating func release(_ connection: Connection, reusable: Bool) -> Actions {
        leased -= 1
        var actions = Actions()
        if isClosed || !reusable {
            actions.close.append(connection)
            if !isClosed { actions.wake = wakeForFreeSlots().wake }
        } else if waiters.isEmpty {
            idle.append(connection)
        } else {
            leased += 1
            actions.wake.append((waiters.removeFirst(), .use(connection)))
        }
        return actions
    }

    /// Waiter `waiter`'s deadline passed. Returns its error, or nil if it was woken already.
    mutating func timedOut(_ waiter: UInt64, after timeout: Duration) -> PostgresError? {
        guard remove(waiter) else { return nil }
        if let lastConnectError { return lastConnectError }
        return PostgresError(
            .poolTimeout, message: "no PostgreSQL connection free within \(timeout) (all \(maxConnections) in use)")
    }

    /// Takes `waiter` out of the queue (its task was cancelled); false if it was woken already.
    mutating func remove(_ waiter: UInt64) -> Bool {
        guard let index = waiters.firstIndex(of: waiter) else { return false }
        waiters.remove(at: index)
        return true
    }

    /// No more connections: idle ones are closed, waiters fail, leased ones close when released.
    mutating func close() -> Actions {
        isClosed = true
        var actions = Actions(close: idle)
        idle.removeAll()
        actions.wake = waiters.map { ($0, .fail(Self.closed)) }
        waiters.removeAll()
        return actions
    }

    private mutating func wakeForFreeSlots() -> Actions {
        var actions = Actions()
        let count = min(waiters.count, maxConnections - openCount)
        guard count > 0 else { return actions }
        actions.wake = waiters.prefix(count).map { ($0, .retry) }
        waiters.removeFirst(count)
        return actions
    }

    private static var closed: PostgresError { PostgresError(.poolClosed, message: "the PostgreSQL pool is closed") }
}

extension PostgresPoolState: Sendable where Connection: Sendable {}
extension PostgresPoolState.Acquire: Sendable where Connection: Sendable {}
extension PostgresPoolState.Wake: Sendable where Connection: Sendable {}
extension PostgresPoolState.Actions: Sendable where Connection: Sendable {}
