import Foundation
import NativeStore
import Testing

/// `GroupCommitResource`: calls that queue up behind each other share one COMMIT, and each caller
/// still sees its own call succeed or fail alone, answered only once committed. A second
/// connection on the same file is the witness: it sees committed rows and nothing else.
@Suite struct GroupCommitTests {
    let file = TemporaryDatabase()

    private func open() throws -> GroupCommitResource<SQLiteDatabase> {
        let database = try SQLiteDatabase(path: file.path)
        try database.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        try database.execute("PRAGMA foreign_keys = ON")
        try database.execute("CREATE TABLE child (parent INTEGER REFERENCES t(id) DEFERRABLE INITIALLY DEFERRED)")
        return GroupCommitResource(database) { $0 }
    }

    /// Rows another connection sees, i.e. committed ones.
    private func committed() throws -> [String] { try Self.committed(file.path) }

    private static func committed(_ path: String) throws -> [String] {
        try SQLiteDatabase(path: path).query("SELECT name FROM t ORDER BY id").map { try $0.text(0) }
    }

    /// Holds the connection until the calls under test have queued behind it.
    private static func blocker(_ resource: GroupCommitResource<SQLiteDatabase>) -> Task<Void, any Error> {
        Task { try await resource.use { _ in Thread.sleep(forTimeInterval: 0.3) } }
    }

    private static func insert(_ name: String) -> @Sendable (inout SQLiteDatabase) throws -> Void {
        { database in try database.transaction { try database.run("INSERT INTO t (name) VALUES (?)", [.text(name)]) } }
    }

    @Test func queuedCallsShareOneCommitAndEachIsAnsweredOnlyOnceCommitted() async throws {
        defer { file.remove() }
        let resource = try open()
        let blocking = Self.blocker(resource)
        try await Task.sleep(for: .milliseconds(50))
        let path = file.path
        let seenCommitted = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<32 {
                group.addTask {
                    try await resource.use(Self.insert("row \(index)"))
                    // Answered: another connection must already see the row.
                    return try Self.committed(path).contains("row \(index)")
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        try await blocking.value
        #expect(seenCommitted == 32)
        #expect(try committed().count == 32)
        #expect(resource.groupCommits == 1, "32 calls queued behind one: one group")
    }

    @Test func aFailingCallUndoesOnlyItselfAndTheOthersCommit() async throws {
        defer { file.remove() }
        struct Refused: Error {}
        let resource = try open()
        let blocking = Self.blocker(resource)
        try await Task.sleep(for: .milliseconds(50))
        let first = Task { try await resource.use(Self.insert("a")) }
        let second = Task {
            try await resource.use { database in
                try database.transaction {
                    try database.run("INSERT INTO t (name) VALUES ('b')")
                    throw Refused()
                }
            }
        }
        let third = Task { try await resource.use(Self.insert("c")) }
        try await first.value
        await #expect(throws: Refused.self) { try await second.value }
        try await third.value
        try await blocking.value
        #expect(try committed() == ["a", "c"])
        #expect(resource.groupCommits == 1)
    }

    /// A COMMIT that fails (here a deferred foreign key, checked only at COMMIT) fails every call
    /// of the group, and nothing of the group is stored.
    @Test func aFailedCommitFailsEveryCallOfTheGroup() async throws {
        defer { file.remove() }
        let resource = try open()
        let blocking = Self.blocker(resource)
        try await Task.sleep(for: .milliseconds(50))
        let innocent = Task { try await resource.use(Self.insert("kept only if committed")) }
        let orphan = Task {
            try await resource.use { database in
                try database.transaction { try database.run("INSERT INTO child (parent) VALUES (999)") }
            }
        }
        await #expect(throws: SQLiteError.self) { try await innocent.value }
        await #expect(throws: SQLiteError.self) { try await orphan.value }
        try await blocking.value
        #expect(try committed().isEmpty)
        #expect(resource.groupCommits == 0)
        // The connection is usable again afterwards.
        try await resource.use(Self.insert("after"))
        #expect(try committed() == ["after"])
    }
}
