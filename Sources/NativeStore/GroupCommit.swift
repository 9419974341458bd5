public import NativeOS
import Synchronization

/// A SQLite connection (inside a resource that holds it) used one call at a time off the
/// cooperative pool, like `NativeOS.BlockingResource`, except that calls waiting behind each
/// other are committed together: one `fsync` for a group instead of one each.
///
/// Why: with `synchronous = FULL` every commit waits for the disk, and a serial connection commits
/// one call after the other, so under many small uploads the connection's commits, not the CPU,
/// set the pace (the load suite left a third of the machine idle). Group commit is the classic
/// answer (PostgreSQL's `commit_delay`, InnoDB's binlog group commit); here it costs no delay:
/// a group is whatever queued up while the previous one ran.
///
/// What each caller still gets, exactly as with one transaction per call:
/// - Isolation of failures: a call's `transaction {}` blocks become savepoints inside the group's
///   transaction, so a block that throws undoes only itself; statements outside any block count
///   as committed, as they were when each call committed alone.
/// - "Acknowledged means stored": a call's result is handed back only after the group's COMMIT
///   returned, i.e. after the fsync. If the COMMIT fails, every call of the group that had
///   succeeded gets that error instead, and nothing of the group is in the database.
/// - A statement that makes SQLite roll back the whole transaction (a full disk, an I/O error)
///   fails the calls before it in the group too (their work went with it), with that error;
///   the calls after it start a new group.
/// - Order: calls run in the order submitted, and a later call sees an earlier one's writes.
///
/// A group of one call runs without the surrounding transaction, as before.
public final class GroupCommitResource<Resource>: Sendable {
    private typealias Finish = @Sendable ((any Error)?) -> Void
    /// Runs a call; returns its completion and its own error, if it failed.
    private typealias Job = @Sendable (inout Resource) -> (finish: Finish, failure: (any Error)?)

    private struct Queue {
        var jobs: [Job] = []
        var draining = false
    }

    /// Most calls in one group: bounds how long the first call of a group waits for its commit.
    public static var maximumGroup: Int { 64 }

    private let resource: Mutex<Resource>
    private let connection: @Sendable (inout Resource) -> SQLiteDatabase
    private let queue = Mutex(Queue())
    private let pool: BlockingThreadPool
    private let commits = Atomic<Int>(0)

    /// Takes ownership of `resource`; `connection` finds the SQLite connection in it.
    public init(
        _ resource: sending Resource, pool: BlockingThreadPool = .shared,
        connection: @escaping @Sendable (inout Resource) -> SQLiteDatabase
    ) {
        self.resource = Mutex(resource)
        self.connection = connection
        self.pool = pool
    }

    /// Transactions committed so far by groups of two calls or more (for tests and metrics).
    public var groupCommits: Int { commits.load(ordering: .relaxed) }

    /// Calls queued and not started yet (for tests and metrics: the depth of the queue).
    public var waitingCalls: Int { queue.withLock { $0.jobs.count } }

    /// Runs `work` with the resource, in the next group, and returns its result once the group
    /// is committed (or rethrows its error, or the group's).
    public func use<T: Sendable>(_ work: @escaping @Sendable (inout Resource) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            submit { resource in
                let result = Result { try work(&resource) }
                let finish: Finish = { groupError in
                    if let groupError, case .success = result {
                        continuation.resume(throwing: groupError)
                    } else {
                        continuation.resume(with: result)
                    }
                }
                if case .failure(let error) = result { return (finish, error) }
                return (finish, nil)
            }
        }
    }

    private func submit(_ job: @escaping Job) {
        let start = queue.withLock { queue in
            queue.jobs.append(job)
            guard !queue.draining else { return false }
            queue.draining = true
            return true
        }
        if start { pool.submit { self.drain() } }
    }

    /// Groups a drain runs on one pool thread before it goes back to the end of the pool's queue,
    /// so a busy connection does not keep a thread from other work for long.
    static var groupsPerTurn: Int { 16 }

    /// Runs the groups waiting, one after the other, until none is left (or ``groupsPerTurn``
    /// ran: then the rest waits its turn at the end of the pool's queue). Staying on the thread
    /// matters: going back to the pool after every group woke a second thread for each commit,
    /// often only to find the queue empty (the load suite on tmpfs: 24 context switches per
    /// small upload in up-server before, 20-21 after).
    private func drain() {
        for _ in 0..<Self.groupsPerTurn {
            let group = queue.withLock { queue -> [Job] in
                let taken = Array(queue.jobs.prefix(Self.maximumGroup))
                queue.jobs.removeFirst(taken.count)
                if taken.isEmpty { queue.draining = false }
                return taken
            }
            guard !group.isEmpty else { return }
            let finished = resource.withLock { resource in run(group, &resource) }
            for (finish, error) in finished { finish(error) }
        }
        pool.submit { self.drain() }
    }

    /// Runs `group` on the connection; returns each call's completion with the error its caller
    /// gets on top of its own result (nil: committed).
    private func run(_ group: [Job], _ resource: inout Resource) -> [(Finish, (any Error)?)] {
        let database = connection(&resource)
        guard group.count > 1, !database.isInTransaction, (try? database.execute("BEGIN IMMEDIATE")) != nil else {
            return group.map { job in (job(&resource).finish, nil) }
        }
        var done: [(Finish, (any Error)?)] = []
        var open: [Finish] = []  // ran inside the open transaction: their fate is its end
        for (index, job) in group.enumerated() {
            // The call's own `transaction {}` blocks become savepoints inside the group's
            // transaction, so a failing block undoes only itself, as it did alone.
            let (finish, failure) = job(&resource)
            guard database.isInTransaction else {
                // SQLite rolled the whole transaction back (SQLITE_FULL, an I/O error): the
                // calls before this one lost their writes, and so did this one; all get the
                // error that did it, so a full disk still reads as one.
                let lost = failure ?? SQLiteError(code: SQLiteError.ioError, message: "a grouped commit was rolled back")
                done += (open + [finish]).map { ($0, lost) }
                return done + run(Array(group[(index + 1)...]), &resource)
            }
            open.append(finish)
        }
        do {
            try database.execute("COMMIT")
            commits.add(1, ordering: .relaxed)
            return done + open.map { ($0, nil) }
        } catch {
            if database.isInTransaction { _ = try? database.execute("ROLLBACK") }
            return done + open.map { ($0, error) }
        }
    }
}
