import Synchronization

/// Where blocking work runs — disk reads and writes, `fsync`, SQLite and libpq calls, a wait for
/// an S3 request — so it never holds one of the Swift cooperative pool's threads (one per core:
/// a handler waiting on the disk there stalls every other request scheduled on that thread). The
/// caller suspends on a continuation until the work has run on a ``BlockingThreadPool`` thread.
///
/// The one executor of the code base: ``shared`` (concurrent) for independent calls such as blob
/// file I/O, and a serial one per ``BlockingResource`` for a connection that must be used one
/// call at a time. Both run on the same pool.
public final class BlockingExecutor: Sendable {
    /// Concurrent, for independent blocking calls (blob files, directory removals, libpq).
    public static let shared = BlockingExecutor(concurrent: true)

    private enum Order: Sendable {
        case concurrent
        case serial(SerialLane)
    }

    private let pool: BlockingThreadPool
    private let order: Order

    /// Creates an executor on `pool`.
    ///
    /// - Parameters:
    ///   - concurrent: Whether calls may run at the same time; serial (one at a time, in the order
    ///     submitted) by default.
    ///   - pool: The threads to run on; ``BlockingThreadPool/shared`` by default.
    public init(concurrent: Bool = false, pool: BlockingThreadPool = .shared) {
        self.pool = pool
        order = concurrent ? .concurrent : .serial(SerialLane(pool: pool))
    }

    /// Runs `work` on the executor and returns its result (or rethrows its error).
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            submit { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Queues `job` in this executor's order.
    func submit(_ job: @escaping @Sendable () -> Void) {
        switch order {
        case .concurrent: pool.submit(job)
        case .serial(let lane): lane.submit(job)
        }
    }
}

/// Jobs that run one at a time in order on a shared pool: while the lane has work, one pool
/// thread drains it; after ``batch`` jobs that thread goes back to the end of the pool's queue,
/// so a busy lane does not keep a thread from the others' jobs.
final class SerialLane: Sendable {
    private struct State {
        var jobs = JobQueue()
        var draining = false
    }

    private static let batch = 64
    private let pool: BlockingThreadPool
    private let state = Mutex(State())

    init(pool: BlockingThreadPool) { self.pool = pool }

    func submit(_ job: @escaping @Sendable () -> Void) {
        let start = state.withLock { state in
            state.jobs.append(job)
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        if start { pool.submit { self.drain() } }
    }

    private func drain() {
        for _ in 0..<Self.batch {
            let next = state.withLock { state in
                let job = state.jobs.popFirst()
                if job == nil { state.draining = false }
                return job
            }
            guard let next else { return }
            next()
        }
        pool.submit { self.drain() }
    }
}

/// A resource that is not `Sendable` (a SQLite connection) confined to a serial
/// ``BlockingExecutor`` of its own: every use runs there, one at a time, off the cooperative pool.
///
/// The resource sits in a `Mutex` so the compiler can see that one thread at a time touches it;
/// taken only by the serial executor, the lock is never contended.
public final class BlockingResource<Resource>: Sendable {
    private let executor = BlockingExecutor()
    private let resource: Mutex<Resource>

    /// Takes ownership of `resource`.
    public init(_ resource: sending Resource) {
        self.resource = Mutex(resource)
    }

    /// Runs `work` with the resource on its executor, suspending the caller until it ends.
    public func use<T: Sendable>(_ work: @escaping @Sendable (inout Resource) throws -> T) async throws -> T {
        try await executor.run { try self.resource.withLock { try work(&$0) } }
    }
}
