import Foundation
import NativeStore
import Synchronization

/// Small blobs of `FileBlockStore`, kept as rows of one SQLite file
/// (`<dataDir>/blobs/inline.sqlite3`) instead of a file each.
///
/// Why: a small upload's blob as a file costs an inode allocation, a directory fsync and the
/// file's own fsync, each on the request's path; under 64 small uploads at once those were about
/// 30 % of up-server's CPU (perf, the load suite on ext4). As a row, the bytes go into the
/// write-ahead log with the rows written beside them and share one fsync (group commit), as
/// MinIO keeps objects up to 128 KiB inside their metadata file and SQLite's own measurements
/// find blobs below about 100 KB faster to keep in the database than beside it.
///
/// Writes (``insert(_:_:at:)``, ``replace(_:_:at:)``, ``remove(_:)``) come from blocking-pool
/// threads that must not wait for another queued job (`NativeOS.BlockingThreadPool`): so the
/// group commit is leader and followers. The first writer to find no commit running commits every write queued, including
/// the ones that queue while it does, for at most ``groupsPerTurn`` groups; the others wait on
/// the condition for their outcome, which the leader sets only after COMMIT returned
/// ("acknowledged means stored"). Reads use a second connection (WAL: readers never wait for
/// the writer's fsync).
///
/// `@unchecked Sendable`: `queue`, `leading` and `forgotten` are touched only with `condition`
/// locked, and `writer` only by the one thread that set `leading`.
final class InlineBlobs: @unchecked Sendable {
    /// Groups one leader commits before it lets a waiting writer lead the rest.
    static let groupsPerTurn = 16

    /// The database file.
    let path: String
    private let writer: SQLiteDatabase
    private let reader: Mutex<SQLiteDatabase>
    private let condition = NSCondition()
    private var queue: [Write] = []
    private var leading = false
    /// Rows ``remove(_:)`` could only forget: on a full disk a DELETE needs room in the log too.
    /// Invisible from then on, and deleted by the next group commit that succeeds.
    private var forgotten: Set<BlobID> = []
    private let commits = Atomic<Int>(0)

    /// Transactions committed for groups of two writes or more (tests, metrics).
    var groupCommits: Int { commits.load(ordering: .relaxed) }

    private final class Write {
        let run: (SQLiteDatabase) throws -> Void
        var outcome: Result<Void, any Error>?
        init(_ run: @escaping (SQLiteDatabase) throws -> Void) { self.run = run }
    }

    static let schema = """
        CREATE TABLE blobs (
            id TEXT PRIMARY KEY,
            bytes BLOB NOT NULL,
            written_at REAL NOT NULL
        );
        """

    /// Opens (creating if needed) the rows at `path`.
    ///
    /// - Throws: `SQLiteError`.
    init(path: String) throws {
        self.path = path
        writer = try SQLiteDatabase(path: path, configuration: .init(synchronous: .full))
        _ = try writer.migrate([Self.schema])
        reader = Mutex(try SQLiteDatabase(path: path, configuration: .init(synchronous: .full)))
    }

    /// Stores `bytes` as `blob`, durable when this returns.
    func insert(_ blob: BlobID, _ bytes: [UInt8], at seconds: Double) throws {
        try write { database in
            try database.run(
                "INSERT INTO blobs (id, bytes, written_at) VALUES (?, ?, ?)",
                [.text(blob.hex), .blob(bytes), .real(seconds)])
        }
    }

    /// Replaces `blob`'s bytes, durable when this returns; false when it has no row.
    func replace(_ blob: BlobID, _ bytes: [UInt8], at seconds: Double) throws -> Bool {
        let found = Mutex(false)
        try write { database in
            try database.run(
                "UPDATE blobs SET bytes = ?, written_at = ? WHERE id = ?", [.blob(bytes), .real(seconds), .text(blob.hex)])
            found.withLock { $0 = database.changes > 0 }
        }
        return found.withLock { $0 }
    }

    /// Deletes `blob`'s row, if there is one. On a full disk the row is forgotten instead (gone
    /// for every read from now on) and deleted by the next commit that succeeds, as a file's
    /// unlink would have given the space back at once; a restart before that leaves it to the
    /// orphan sweep.
    func remove(_ blob: BlobID) throws {
        guard try length(of: blob) != nil else { return }
        do {
            try write { database in try Self.delete([blob], database) }
        } catch where InsufficientStorage.isNoSpace(error) {
            condition.lock()
            forgotten.insert(blob)
            condition.unlock()
        }
    }

    /// Deletes the forgotten rows now, if there are any and the disk has room: a no-op otherwise.
    func deleteForgotten() {
        condition.lock()
        let any = !forgotten.isEmpty
        condition.unlock()
        if any { try? write { _ in } }  // every group takes the forgotten rows along
    }

    private static func delete(_ blobs: some Sequence<BlobID>, _ database: SQLiteDatabase) throws {
        for blob in blobs { try database.run("DELETE FROM blobs WHERE id = ?", [.text(blob.hex)]) }
    }

    private func isForgotten(_ blob: BlobID) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return forgotten.contains(blob)
    }

    /// `blob`'s length, or nil when it has no row.
    func length(of blob: BlobID) throws -> Int64? {
        if isForgotten(blob) { return nil }
        return try reader.withLock { database in
            try database.query("SELECT length(bytes) FROM blobs WHERE id = ?", [.text(blob.hex)]).first?.integer(0)
        }
    }

    /// `blob`'s bytes, or nil when it has no row.
    func bytes(of blob: BlobID) throws -> [UInt8]? {
        if isForgotten(blob) { return nil }
        return try reader.withLock { database in
            try database.query("SELECT bytes FROM blobs WHERE id = ?", [.text(blob.hex)]).first.map { $0[0].blobValue ?? [] }
        }
    }

    /// Every row's blob and when it was written.
    func inventory() throws -> [ListedBlob] {
        let rows = try reader.withLock { database in
            try database.query("SELECT id, written_at FROM blobs ORDER BY id").compactMap { row -> ListedBlob? in
                guard let blob = BlobID(hex: try row.text(0)) else { return nil }
                return ListedBlob(id: blob, modifiedAt: try row.real(1))
            }
        }
        condition.lock()
        defer { condition.unlock() }
        return rows.filter { !forgotten.contains($0.id) }
    }

    /// Runs `run` in the next group commit; returns once that group's COMMIT returned.
    private func write(_ run: @escaping (SQLiteDatabase) throws -> Void) throws {
        let mine = Write(run)
        condition.lock()
        queue.append(mine)
        while mine.outcome == nil && leading { condition.wait() }
        if mine.outcome == nil {
            // Nobody is committing and ours is still queued: commit the queue, ours first among it.
            leading = true
            var turns = 0
            repeat {
                var group = queue
                queue = []
                let purge = forgotten
                if !purge.isEmpty { group.append(Write { try Self.delete(purge, $0) }) }
                condition.unlock()
                let outcomes = commit(group)
                condition.lock()
                for (write, outcome) in zip(group, outcomes) { write.outcome = outcome }
                if !purge.isEmpty, case .success = outcomes[outcomes.count - 1] { forgotten.subtract(purge) }
                turns += 1
                condition.broadcast()
            } while !queue.isEmpty && turns < Self.groupsPerTurn
            leading = false
            condition.broadcast()  // a writer still queued leads the rest
        }
        let outcome = mine.outcome!
        condition.unlock()
        try outcome.get()
    }

    /// One transaction for `group`; if anything in it fails, each write runs alone instead, so a
    /// write gets only its own error.
    private func commit(_ group: [Write]) -> [Result<Void, any Error>] {
        if group.count > 1 {
            do {
                try writer.execute("BEGIN IMMEDIATE")
                for write in group { try write.run(writer) }
                try writer.execute("COMMIT")
                commits.add(1, ordering: .relaxed)
                return group.map { _ in .success(()) }
            } catch {
                if writer.isInTransaction { try? writer.execute("ROLLBACK") }
            }
        }
        return group.map { write in Result { try write.run(writer) } }
    }
}
