public import Foundation
import NativeOS
import NativeStore
import UpCore

/// The production `UpIndex`: one SQLite file, `<dataDir>/index.sqlite3`, in WAL mode with
/// `synchronous = FULL`, so a commit is on disk before the handler replies ("acknowledged means
/// stored", DESIGN.md) and a ctx or uploadId survives a restart (qiniu-protocol.md §9.4).
///
/// Threads: SQLite calls block on the disk, so the connection is a `BlockingResource` (NativeOS):
/// every call runs on its own serial queue while the caller awaits, keeping the Swift
/// cooperative pool free.
public final class SQLiteUpIndex: UpIndex {
    private let database: BlockingResource<SQLiteDatabase>

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
        database = BlockingResource(label: "upgate.up-index", connection)
    }

    /// Runs `work` on the index's queue with the connection, suspending the caller until it ends.
    ///
    /// A full disk (`SQLITE_FULL`, or an I/O error caused by `ENOSPC`) comes out as
    /// `UpError(.insufficientStorage)`: SQLite has rolled the statement back and
    /// `SQLiteDatabase.transaction` the transaction, so nothing of `work` is in the index and the
    /// same call can succeed once space is freed.
    func perform<T: Sendable>(_ work: @escaping @Sendable (SQLiteDatabase) throws -> T) async throws -> T {
        let path = self.path
        return try await database.use { connection in
            do {
                return try work(connection)
            } catch let error as SQLiteError where error.isFull {
                throw UpError.insufficientStorage("index \(path): \(error)")
            }
        }
    }

    /// The journal mode SQLite reports (`"wal"`), for health checks and tests.
    public func journalMode() async throws -> String {
        try await perform { try $0.query("PRAGMA journal_mode")[0].text(0) }
    }

    // MARK: Blocks

    static let blockColumns = "blob, block_size, received, crc32, sha1, expires_at, created_at"

    /// See `UpIndex.createBlock(_:blockSize:received:crc32:sha1:expiresAt:createdAt:)`.
    public func createBlock(
        _ blob: BlobID, blockSize: Int64, received: Int64, crc32: UInt32, sha1: [UInt8]?, expiresAt: Int64,
        createdAt: Int64
    ) async throws -> BlockRecord {
        let record = try UpIndexRules.newBlock(
            blob, blockSize: blockSize, received: received, crc32: crc32, sha1: sha1, expiresAt: expiresAt,
            createdAt: createdAt)
        try await perform { database in
            try database.run(
                "INSERT INTO blocks (\(Self.blockColumns)) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    .text(blob.hex), .integer(blockSize), .integer(received), .integer(Int64(crc32)),
                    sha1.map { .blob($0) } ?? .null, .integer(expiresAt), .integer(createdAt),
                ])
        }
        return record
    }

    /// See `UpIndex.advanceBlock(_:from:to:crc32:sha1:)`.
    public func advanceBlock(
        _ blob: BlobID, from expectedOffset: Int64, to newOffset: Int64, crc32: UInt32, sha1: [UInt8]?
    ) async throws -> Bool {
        try await perform { database in
            try database.transaction {
                guard let record = try Self.block(blob, in: database) else { return false }
                try UpIndexRules.checkAdvance(record, from: expectedOffset, to: newOffset, sha1: sha1)
                // The WHERE on `received` is the compare-and-set: a duplicate chunk finds the
                // offset already moved and changes nothing.
                try database.run(
                    "UPDATE blocks SET received = ?, crc32 = ?, sha1 = ? WHERE blob = ? AND received = ?",
                    [
                        .integer(newOffset), .integer(Int64(crc32)), sha1.map { .blob($0) } ?? .null, .text(blob.hex),
                        .integer(expectedOffset),
                    ])
                return database.changes == 1
            }
        }
    }

    /// See `UpIndex.rewindBlock(_:from:to:crc32:)`.
    public func rewindBlock(_ blob: BlobID, from currentOffset: Int64, to offset: Int64, crc32: UInt32) async throws -> Bool {
        guard offset >= 0, offset < currentOffset else { return false }
        return try await perform { database in
            try database.run(
                "UPDATE blocks SET received = ?, crc32 = ? WHERE blob = ? AND received = ? AND sha1 IS NULL",
                [.integer(offset), .integer(Int64(crc32)), .text(blob.hex), .integer(currentOffset)])
            return database.changes == 1
        }
    }

    /// See `UpIndex.block(_:)`.
    public func block(_ blob: BlobID) async throws -> BlockRecord? {
        try await perform { try Self.block(blob, in: $0) }
    }

    static func block(_ blob: BlobID, in database: SQLiteDatabase) throws -> BlockRecord? {
        try database.query("SELECT \(blockColumns) FROM blocks WHERE blob = ?", [.text(blob.hex)])
            .first.map(Rows.block)
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
