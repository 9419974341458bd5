public import Foundation
import NativeOS
public import NativeStore
public import Outbox
import UpCore

/// The production index: one SQLite file, `<dataDir>/index.sqlite3`, in WAL mode with
/// `synchronous = FULL`, so a commit is on disk before the handler replies ("acknowledged means
/// stored", DESIGN.md) and a ctx or uploadId survives a restart (qiniu-protocol.md §9.4).
///
/// Threads: SQLite calls block on the disk, so the connection is a `GroupCommitResource`
/// (NativeStore): calls run one at a time on the blocking pool while the caller awaits, keeping
/// the Swift cooperative pool free, and calls that queued up behind each other share one commit.
///
/// One class implements every index role (`BlockIndex`, `MultipartIndex`, `ObjectIndex`,
/// `SweepIndex`, one extension each) over one connection, because some steps span roles and must
/// be one transaction: an object with its completion record and its callback's outbox entry
/// (``outbox``, the shared `SQLiteOutbox` on this same database), a v2 complete with its object.
public final class SQLiteUpIndex: SQLiteAccess {
    private let database: GroupCommitResource<SQLiteDatabase>

    /// The database file.
    public let path: String

    /// Opens (creating if needed) `<dataDirectory>/index.sqlite3`, creating the directory too.
    ///
    /// Blocks while it opens and migrates; call it at startup.
    /// - Throws: Foundation's error if the directory cannot be created; `SQLiteError`.
    public convenience init(dataDirectory: URL) throws {
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        try self.init(path: dataDirectory.appendingPathComponent("index.sqlite3").path)
    }

    /// Opens (creating if needed) the index at `path` and brings its schema up to date.
    ///
    /// - Throws: `SQLiteError` if the file cannot be opened or migrated.
    public init(path: String) throws {
        self.path = path
        let connection = try SQLiteDatabase(path: path, configuration: .init(synchronous: .full))
        try connection.migrate(Self.migrations)
        database = GroupCommitResource(connection) { $0 }
    }

    /// Runs `work` on the index's executor with the connection, suspending the caller until it ends.
    ///
    /// A full disk (`SQLITE_FULL`, or an I/O error caused by `ENOSPC`) comes out as
    /// `UpError(.insufficientStorage)`: SQLite has rolled the statement back and
    /// `SQLiteDatabase.transaction` the transaction, so nothing of `work` is in the index and the
    /// same call can succeed once space is freed.
    public func perform<T: Sendable>(_ work: @escaping @Sendable (SQLiteDatabase) throws -> T) async throws -> T {
        let path = self.path
        do {
            return try await database.use { connection in try work(connection) }
        } catch let error as SQLiteError where error.isFull {
            // From the call itself or from its group's COMMIT (see GroupCommitResource).
            throw UpError.insufficientStorage("index \(path): \(error)")
        }
    }

    /// The callback outbox, in this database's `callback_outbox` table.
    public var outbox: SQLiteOutbox { SQLiteOutbox(table: CallbackMessage.table, access: self) }

    /// The journal mode SQLite reports (`"wal"`), for health checks and tests.
    public func journalMode() async throws -> String {
        try await perform { try $0.query("PRAGMA journal_mode")[0].text(0) }
    }

    /// The subset of `blobs` that no object, block or part row names: safe to delete once the
    /// current transaction commits.
    static func unreferenced(_ blobs: [BlobID], in database: SQLiteDatabase) throws -> [BlobID] {
        try Array(Set(blobs)).sorted().filter { blob in
            try database.query(
                """
                SELECT NOT EXISTS (SELECT 1 FROM segments WHERE blob = ?1)
                   AND NOT EXISTS (SELECT 1 FROM blocks WHERE blob = ?1)
                   AND NOT EXISTS (SELECT 1 FROM parts WHERE blob = ?1)
                """, [.text(blob.hex)]
            )[0].integer(0) == 1
        }
    }
}
