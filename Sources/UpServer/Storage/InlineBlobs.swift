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
/// threads and share commits through `GroupCommitResource.useBlocking`: the writes that queue
/// while a group commits go into the next one, and each returns only after its group's COMMIT
/// ("acknowledged means stored"). Reads use a second connection (WAL: readers never wait for
/// the writer's fsync).
final class InlineBlobs: Sendable {
    /// The database file.
    let path: String
    private let writer: GroupCommitResource<SQLiteDatabase>
    private let reader: Mutex<SQLiteDatabase>
    /// Rows ``remove(_:)`` could only forget: on a full disk a DELETE needs room in the log too.
    /// Invisible from then on, and deleted after the next write that succeeds.
    private let forgotten = Mutex<Set<BlobID>>([])

    /// Transactions committed for groups of two writes or more (tests, metrics).
    var groupCommits: Int { writer.groupCommits }

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
        let database = try SQLiteDatabase(path: path, configuration: .init(synchronous: .full))
        _ = try database.migrate([Self.schema])
        writer = GroupCommitResource(database) { $0 }
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
        try write { database in
            try database.run(
                "UPDATE blobs SET bytes = ?, written_at = ? WHERE id = ?", [.blob(bytes), .real(seconds), .text(blob.hex)])
            return database.changes > 0
        }
    }

    /// Deletes `blob`'s row, if there is one. On a full disk the row is forgotten instead (gone
    /// for every read from now on) and deleted after the next write that succeeds, as a file's
    /// unlink would have given the space back at once; a restart before that leaves it to the
    /// orphan sweep.
    func remove(_ blob: BlobID) throws {
        guard try length(of: blob) != nil else { return }
        do {
            try write { database in try Self.delete([blob], database) }
        } catch where InsufficientStorage.isNoSpace(error) {
            forgotten.withLock { _ = $0.insert(blob) }
        }
    }

    /// Deletes the forgotten rows now, if there are any and the disk has room: a no-op otherwise.
    func deleteForgotten() {
        let purge = forgotten.withLock { $0 }
        guard !purge.isEmpty, (try? writer.useBlocking({ database in try Self.delete(purge, database) })) != nil else { return }
        forgotten.withLock { $0.subtract(purge) }
    }

    private static func delete(_ blobs: some Sequence<BlobID>, _ database: SQLiteDatabase) throws {
        for blob in blobs { try database.run("DELETE FROM blobs WHERE id = ?", [.text(blob.hex)]) }
    }

    private func isForgotten(_ blob: BlobID) -> Bool {
        forgotten.withLock { $0.contains(blob) }
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
        let hidden = forgotten.withLock { $0 }
        return rows.filter { !hidden.contains($0.id) }
    }

    /// Runs `run` in the next group commit; returns once that group's COMMIT returned. A write
    /// that succeeded shows the disk has room: the forgotten rows go next.
    private func write<T: Sendable>(_ run: @escaping @Sendable (SQLiteDatabase) throws -> T) throws -> T {
        let result = try writer.useBlocking { database in try run(database) }
        deleteForgotten()
        return result
    }
}
