import Foundation
import NativeOS
import NativeStore
import Synchronization
import Testing

/// `GroupCommitResource`: calls that queue up behind each other share one COMMIT, and each caller
/// still sees its own call succeed or fail alone, answered only once committed. A second
/// connection on the same file is the witness: it sees committed rows and nothing else.
@Suite struct GroupCommitTests {
    let file = TemporaryDatabase()

    private func open(pool: BlockingThreadPool = .shared) throws -> GroupCommitResource<SQLiteDatabase> {
        let database = try SQLiteDatabase(path: file.path)
        try database.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        try database.execute("PRAGMA foreign_keys = ON")
        try database.execute("CREATE TABLE child (parent INTEGER REFERENCES t(id) DEFERRABLE INITIALLY DEFERRED)")
        return GroupCommitResource(database, pool: pool) { $0 }
    }

    /// Rows another connection sees, i.e. committed ones.
    private func committed() throws -> [String] { try Self.committed(file.path) }

    private static func committed(_ path: String) throws -> [String] {
        try SQLiteDatabase(path: path).query("SELECT name FROM t ORDER BY id").map { try $0.text(0) }
    }

    /// A call that holds the connection until the calls under test have queued behind it.
    ///
    /// The calls are started as tasks, whose order on the cooperative pool is not fixed, so a test
    /// starts each one only once the previous one is queued (``queue(_:on:)``), and opens the gate
    /// only once all are: under a loaded machine a fixed sleep left them in any order, or in
    /// several groups.
    private struct Blocker {
        let task: Task<Void, any Error>
        private let started = DispatchSemaphore(value: 0)
        private let gate = DispatchSemaphore(value: 0)

        /// Returns once the blocking call runs (so it is no longer counted as waiting).
        init(_ resource: GroupCommitResource<SQLiteDatabase>) async {
            let (started, gate) = (started, gate)
            task = Task { try await resource.use { _ in started.signal(); gate.wait() } }
            while started.wait(timeout: .now()) == .timedOut { await Task.yield() }
        }

        /// Lets the calls queued behind it run, and waits for its own end.
        func release() async throws {
            gate.signal()
            try await task.value
        }
    }

    /// Starts `call` and returns once it waits in `resource`'s queue.
    private static func queue<T: Sendable>(
        _ call: @escaping @Sendable () async throws -> T, on resource: GroupCommitResource<SQLiteDatabase>
    ) async -> Task<T, any Error> {
        let before = resource.waitingCalls
        let task = Task { try await call() }
        while resource.waitingCalls == before { await Task.yield() }
        return task
    }

    private static func insert(_ name: String) -> @Sendable (inout SQLiteDatabase) throws -> Void {
        { database in try database.transaction { try database.run("INSERT INTO t (name) VALUES (?)", [.text(name)]) } }
    }

    @Test func queuedCallsShareOneCommitAndEachIsAnsweredOnlyOnceCommitted() async throws {
        defer { file.remove() }
        let resource = try open()
        let blocker = await Blocker(resource)
        let path = file.path
        let seenCommitted = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<32 {
                group.addTask {
                    try await resource.use(Self.insert("row \(index)"))
                    // Answered: another connection must already see the row.
                    return try Self.committed(path).contains("row \(index)")
                }
            }
            while resource.waitingCalls < 32 { await Task.yield() }
            try await blocker.release()
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(seenCommitted == 32)
        #expect(try committed().count == 32)
        #expect(resource.groupCommits == 1, "32 calls queued behind one: one group")
    }

    @Test func aFailingCallUndoesOnlyItselfAndTheOthersCommit() async throws {
        defer { file.remove() }
        struct Refused: Error {}
        let resource = try open()
        let blocker = await Blocker(resource)
        let first = await Self.queue({ try await resource.use(Self.insert("a")) }, on: resource)
        let second = await Self.queue({
            try await resource.use { database in
                try database.transaction {
                    try database.run("INSERT INTO t (name) VALUES ('b')")
                    throw Refused()
                }
            }
        }, on: resource)
        let third = await Self.queue({ try await resource.use(Self.insert("c")) }, on: resource)
        try await blocker.release()
        try await first.value
        await #expect(throws: Refused.self) { try await second.value }
        try await third.value
        #expect(try committed() == ["a", "c"])
        #expect(resource.groupCommits == 1)
    }

    /// A COMMIT that fails (here a deferred foreign key, checked only at COMMIT) fails every call
    /// of the group, and nothing of the group is stored.
    @Test func aFailedCommitFailsEveryCallOfTheGroup() async throws {
        defer { file.remove() }
        let resource = try open()
        let blocker = await Blocker(resource)
        let innocent = await Self.queue({ try await resource.use(Self.insert("kept only if committed")) }, on: resource)
        let orphan = await Self.queue({
            try await resource.use { database in
                try database.transaction { try database.run("INSERT INTO child (parent) VALUES (999)") }
            }
        }, on: resource)
        try await blocker.release()
        await #expect(throws: SQLiteError.self) { try await innocent.value }
        await #expect(throws: SQLiteError.self) { try await orphan.value }
        #expect(try committed().isEmpty)
        #expect(resource.groupCommits == 0)
        // The connection is usable again afterwards.
        try await resource.use(Self.insert("after"))
        #expect(try committed() == ["after"])
    }

    // MARK: useBlocking: callers on blocking-pool threads

    /// Threads that block in `useBlocking` while another group commits all go into the next
    /// group, and each returns only once another connection sees its row.
    @Test func blockedCallersShareOneCommitAndAreAnsweredOnlyOnceCommitted() async throws {
        defer { file.remove() }
        let resource = try open()
        let blocker = await Blocker(resource)
        let path = file.path
        let seen = Mutex(0)
        let group = DispatchGroup()
        for index in 0..<32 {
            group.enter()
            Thread {
                if (try? resource.useBlocking(Self.insert("row \(index)"))) != nil,
                   (try? Self.committed(path).contains("row \(index)")) == true {
                    seen.withLock { $0 += 1 }
                }
                group.leave()
            }.start()
        }
        while resource.waitingCalls < 32 { await Task.yield() }
        try await blocker.release()
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(seen.withLock { $0 } == 32)
        #expect(try committed().count == 32)
        #expect(resource.groupCommits == 1, "32 blocked callers queued behind one: one group")
    }

    /// A blocked caller never waits for a drain job that is still queued on the pool: on a pool
    /// whose only thread is that caller, waiting would never end. It commits the queue itself,
    /// the asynchronous call queued before it included.
    @Test func aBlockedCallerCommitsWhatAQueuedPoolJobWould() async throws {
        defer { file.remove() }
        let pool = BlockingThreadPool(name: "group-commit-test", maximumThreads: 1)
        let resource = try open(pool: pool)
        let go = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        pool.submit {  // holds the pool's one thread until `go`, then blocks in useBlocking
            go.wait()
            _ = try? resource.useBlocking(Self.insert("blocked"))
            done.signal()
        }
        let queued = Task { try await resource.use(Self.insert("queued")) }  // its drain waits for the thread
        while resource.waitingCalls < 1 { await Task.yield() }
        go.signal()
        let finished = done.wait(timeout: .now() + 30) == .success
        #expect(finished, "the blocked caller waited for a job queued behind it")
        guard finished else { return }  // both calls stay stuck: nothing more to check
        try await queued.value
        #expect(try committed() == ["queued", "blocked"])
    }
}
