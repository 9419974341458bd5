import NativeOS
import Synchronization

/// A bounded pool of ``PostgresConnection``s for async code: the one way servers reach PostgreSQL.
///
/// ```swift
/// let pool = try PostgresPool(PostgresConnectionString(url))
/// try await pool.migrate(BizSchema.migrations)
/// let id = try await pool.transaction { connection in
///     try connection.query("INSERT INTO t (name) VALUES ($1) RETURNING id", ["a"]).first!.decode(0, as: Int64.self)
/// }
/// ```
///
/// A body runs synchronously on a blocking-work thread with a connection of its own, never on the
/// Swift cooperative pool: keep it to SQL (no waiting on other work while holding a connection
/// and maybe its locks). Connections are opened on demand up to `maxConnections`; callers beyond
/// that wait in line (``Configuration/acquireTimeout``). A connection that broke is dropped and
/// replaced by the next caller; one that died while idle (the server restarted) is noticed
/// before use and replaced. While the server is down, connect attempts back off (see
/// ``PostgresPoolState``) and callers fail with ``PostgresError/Code/connection`` once their
/// acquire timeout cannot be met; a server back within it serves them.
public final class PostgresPool: Sendable {
    /// Where the pool connects.
    public let connectionString: PostgresConnectionString
    /// The pool's limits and the settings of each connection.
    public let configuration: Configuration
    private let shared: Mutex<Shared>

    private struct Shared {
        var state: PostgresPoolState<PooledConnection>
        var continuations: [UInt64: CheckedContinuation<PostgresPoolState<PooledConnection>.Wake, any Error>] = [:]
        /// Wakes (or cancellations) that arrived before their waiter stored its continuation.
        var early: [UInt64: Result<PostgresPoolState<PooledConnection>.Wake, any Error>] = [:]
        var nextWaiter: UInt64 = 0
    }

    /// Creates a pool; no connection is opened until one is needed.
    public init(_ connectionString: PostgresConnectionString, configuration: Configuration = Configuration()) {
        self.connectionString = connectionString
        self.configuration = configuration
        shared = Mutex(
            Shared(
                state: PostgresPoolState(
                    maxConnections: configuration.maxConnections, initialBackoff: configuration.initialBackoff,
                    maxBackoff: configuration.maxBackoff)))
    }

    /// Runs `body` with a connection of the pool's on a blocking-work thread and returns its result.
    ///
    /// If `body` leaves a transaction open, it is rolled back before the connection is reused.
    /// - Parameter acquireTimeout: How long to wait for a connection; the pool's default if nil.
    /// - Throws: ``PostgresError`` (``PostgresError/Code/poolTimeout``, ``PostgresError/Code/connection``
    ///   while the server is unreachable, …), or whatever `body` throws.
    @discardableResult
    public func withConnection<T: Sendable>(
        acquireTimeout: Duration? = nil, _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        let deadline = ContinuousClock.now + (acquireTimeout ?? configuration.acquireTimeout)
        // Each pass leases a connection; only one that died while idle sends us round again,
        // and each such one is dropped, so this ends (at the latest at the deadline).
        while true {
            let (pooled, fresh) = try await lease(until: deadline, timeout: acquireTimeout ?? configuration.acquireTimeout)
            let outcome = try await BlockingExecutor.shared.run { pooled.run(checkFirst: !fresh, body) }
            let actions = shared.withLock { $0.state.release(pooled, reusable: outcome.reusable) }
            carryOut(actions)
            if let result = outcome.result { return try result.get() }
        }
    }

    /// Runs `body` in a transaction (``PostgresConnection/transaction(isolation:_:)``) on a pooled
    /// connection: committed if it returns, rolled back if it throws.
    ///
    /// - Throws: as ``withConnection(acquireTimeout:_:)``; ``PostgresError/isRetryable`` errors
    ///   mean the whole call may be repeated.
    @discardableResult
    public func transaction<T: Sendable>(
        isolation: PostgresConnection.IsolationLevel = .readCommitted,
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        try await withConnection { connection in try connection.transaction(isolation: isolation) { try body(connection) } }
    }

    /// Closes idle connections and fails waiting callers; connections in use close when returned.
    public func close() {
        carryOut(shared.withLock { $0.state.close() })
    }

    /// Connections that exist now (idle, in use, or being opened), for tests and metrics.
    public var openConnections: Int { shared.withLock { $0.state.openCount } }

    /// Why the last connect attempt failed, nil if the last one succeeded (for `/healthz`).
    public var lastConnectError: PostgresError? { shared.withLock { $0.state.lastConnectError } }

    private func lease(until deadline: ContinuousClock.Instant, timeout: Duration) async throws -> (PooledConnection, fresh: Bool) {
        let waiter = shared.withLock {
            $0.nextWaiter += 1
            return $0.nextWaiter
        }
        while true {
            switch shared.withLock({ $0.state.acquire(waiter: waiter, now: .now, deadline: deadline) }) {
            case .use(let pooled):
                return (pooled, false)
            case .connect:
                do {
                    let pooled = try await BlockingExecutor.shared.run { [connectionString, configuration] in
                        PooledConnection(try PostgresConnection(connectionString, settings: configuration.connection))
                    }
                    carryOut(shared.withLock { $0.state.connected() })
                    return (pooled, true)
                } catch let error as PostgresError {
                    carryOut(shared.withLock { $0.state.connectFailed(error, now: .now) })
                    // Waiting cannot fix a wrong password or connection string.
                    if error.code == .authentication || error.code == .configuration { throw error }
                }
            case .wait:
                switch try await wait(waiter, until: deadline, timeout: timeout) {
                case .use(let pooled): return (pooled, false)
                case .retry: continue
                case .fail(let error): throw error
                }
            case .retry(let instant):
                try await Task.sleep(until: instant, clock: .continuous)
            case .fail(let error):
                throw error
            }
        }
    }

    private func wait(
        _ waiter: UInt64, until deadline: ContinuousClock.Instant, timeout: Duration
    ) async throws -> PostgresPoolState<PooledConnection>.Wake {
        let timer = Task {
            try await Task.sleep(until: deadline, clock: .continuous)
            if let error = shared.withLock({ $0.state.timedOut(waiter, after: timeout) }) {
                deliver(waiter, .success(.fail(error)))
            }
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let early = shared.withLock { shared in
                    guard let early = shared.early.removeValue(forKey: waiter) else {
                        shared.continuations[waiter] = continuation
                        return nil as Result<PostgresPoolState<PooledConnection>.Wake, any Error>?
                    }
                    return early
                }
                if let early { continuation.resume(with: early) }
            }
        } onCancel: {
            if shared.withLock({ $0.state.remove(waiter) }) { deliver(waiter, .failure(CancellationError())) }
        }
    }

    private func deliver(_ waiter: UInt64, _ result: Result<PostgresPoolState<PooledConnection>.Wake, any Error>) {
        let continuation = shared.withLock { shared in
            guard let continuation = shared.continuations.removeValue(forKey: waiter) else {
                shared.early[waiter] = result
                return nil as CheckedContinuation<PostgresPoolState<PooledConnection>.Wake, any Error>?
            }
            return continuation
        }
        continuation?.resume(with: result)
    }

    private func carryOut(_ actions: PostgresPoolState<PooledConnection>.Actions) {
        for (waiter, wake) in actions.wake { deliver(waiter, .success(wake)) }
        // Closing sends a Terminate message; dropping the last reference runs PQfinish.
        _ = actions.close
    }
}
