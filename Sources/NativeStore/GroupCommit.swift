internal import Foundation
public import NativeOS
import Synchronization

/// A SQLite connection (inside a resource that holds it) used one call at a time, like
/// `NativeOS.BlockingResource`, except that calls waiting behind each other are committed
/// together: one `fsync` for a group instead of one each.
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
///
/// Two ways in, one queue. ``use(_:)`` suspends the calling task; the groups are committed by a
/// job on the blocking pool. ``useBlocking(_:)`` is for callers that already are on the blocking
/// pool (a `BlockStore` writing a row), which must not wait for another queued job of that pool
/// (`BlockingThreadPool`): when no thread is committing, or when the one that would is only a
/// job still queued on the pool, the caller commits the queue itself (leader); otherwise it
/// waits for the thread that commits (follower). Whichever thread commits takes every call that
/// queued meanwhile, ``groupsPerTurn`` groups at most, then steps down: to a blocked caller still
/// waiting, who commits the rest on its own thread, or else to a new job on the pool.
///
/// `@unchecked Sendable`: `state` is read and written only with `condition` locked; the resource
/// only inside `resource`'s lock.
public final class GroupCommitResource<Resource>: @unchecked Sendable {
    private typealias Finish = @Sendable ((any Error)?) -> Void
    /// Runs a call; returns its completion and its own error, if it failed.
    private typealias Job = @Sendable (inout Resource) -> (finish: Finish, failure: (any Error)?)

    /// Which thread commits the queue.
    private enum Committer {
        /// None: the next call to arrive starts one.
        case none
        /// A drain job is queued on the pool and has not started; a blocked caller may commit
        /// instead of waiting for it.
        case queued
        /// A thread (a pool job or a blocked caller) is committing groups.
        case running
    }

    private struct State {
        var jobs: [Job] = []
        var committer = Committer.none
        /// ``useBlocking(_:)`` callers whose call is not finished yet (each has a job queued or
        /// in the group being committed).
        var blockedCallers = 0
    }

    /// Most calls in one group: bounds how long the first call of a group waits for its commit.
    public static var maximumGroup: Int { 64 }

    /// Groups a thread commits before it steps down, so a busy connection does not keep a pool
    /// thread, or a blocked caller that is already answered, from other work for long.
    static var groupsPerTurn: Int { 16 }

    private let resource: Mutex<Resource>
    private let connection: @Sendable (inout Resource) -> SQLiteDatabase
    private let condition = NSCondition()
    private var state = State()
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
    public var waitingCalls: Int {
        condition.lock()
        defer { condition.unlock() }
        return state.jobs.count
    }

    /// Runs `work` with the resource, in the next group, and returns its result once the group
    /// is committed (or rethrows its error, or the group's).
    public func use<T: Sendable>(_ work: @escaping @Sendable (inout Resource) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let job = Self.job(work) { continuation.resume(with: $0) }
            condition.lock()
            state.jobs.append(job)
            let start = state.committer == .none
            if start { state.committer = .queued }
            condition.unlock()
            if start { pool.submit { self.drainOnPool() } }
        }
    }

    /// ``use(_:)`` for a caller on a blocking-pool thread: blocks that thread until the group
    /// with `work` is committed, committing it on this thread when no other is (see the type's
    /// documentation), and returns `work`'s result or rethrows its error, or the group's.
    public func useBlocking<T: Sendable>(_ work: @escaping @Sendable (inout Resource) throws -> T) throws -> T {
        let outcome = BlockedOutcome<T>()
        // Called with `condition` locked (``commitGroups()`` finishes a group under the lock).
        let job = Self.job(work) { [unowned self] result in
            outcome.result = result
            state.blockedCallers -= 1
        }
        condition.lock()
        state.jobs.append(job)
        state.blockedCallers += 1
        while outcome.result == nil {
            if state.committer == .running {
                condition.wait()
            } else {
                state.committer = .running
                commitGroups()
                stepDown()
                condition.lock()
            }
        }
        let result = outcome.result!
        condition.unlock()
        return try result.get()
    }

    /// A call as the queue holds it: `work` run on the resource, and its answer (`deliver`)
    /// given only with the group's outcome.
    private static func job<T: Sendable>(
        _ work: @escaping @Sendable (inout Resource) throws -> T,
        deliver: @escaping @Sendable (Result<T, any Error>) -> Void
    ) -> Job {
        { resource in
            let result = Result { try work(&resource) }
            let finish: Finish = { groupError in
                if let groupError, case .success = result { deliver(.failure(groupError)) } else { deliver(result) }
            }
            if case .failure(let error) = result { return (finish, error) }
            return (finish, nil)
        }
    }

    /// The pool's drain job: commits unless a blocked caller took over since it was queued.
    private func drainOnPool() {
        condition.lock()
        guard state.committer == .queued else {
            condition.unlock()
            return
        }
        state.committer = .running
        commitGroups()
        stepDown()
    }

    /// Commits the groups waiting, one after the other, until none is left or ``groupsPerTurn``
    /// ran. Called and returns with `condition` locked, by the thread that set `.running`.
    /// Staying on one thread matters: going back to the pool after every group woke a second
    /// thread for each commit, often only to find the queue empty (the load suite on tmpfs: 24
    /// context switches per small upload in up-server before, 20-21 after).
    private func commitGroups() {
        var turns = 0
        while !state.jobs.isEmpty && turns < Self.groupsPerTurn {
            let group = Array(state.jobs.prefix(Self.maximumGroup))
            state.jobs.removeFirst(group.count)
            condition.unlock()
            let finished = resource.withLock { resource in run(group, &resource) }
            condition.lock()
            let wake = state.blockedCallers > 0  // counted before the finishes answer them
            for (finish, error) in finished { finish(error) }
            if wake { condition.broadcast() }
            turns += 1
        }
    }

    /// The committing thread stops (called with `condition` locked; unlocks it). What is still
    /// queued goes to a blocked caller, who commits it on its own thread rather than wait for a
    /// pool job, or else to a new drain job on the pool.
    private func stepDown() {
        if state.jobs.isEmpty {
            state.committer = .none
        } else if state.blockedCallers > 0 {
            state.committer = .none
            condition.broadcast()
        } else {
            state.committer = .queued
            condition.unlock()
            pool.submit { self.drainOnPool() }
            return
        }
        condition.unlock()
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

/// Where a blocked caller's answer lands. `@unchecked Sendable`: written and read only with
/// the resource's `condition` locked.
private final class BlockedOutcome<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
