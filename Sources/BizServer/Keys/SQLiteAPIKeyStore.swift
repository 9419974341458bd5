import Foundation
import NativeOS
public import NativeStore

/// The production ``APIKeyStore``: `keys.sqlite3` in the data directory, in WAL mode, so the
/// running server and `biz-server keys …` (another process) use one file at once — readers never
/// wait for the writer, and a write waits for another for at most the busy timeout.
///
/// A file of its own rather than tables in `uploads.sqlite3`: no transaction spans keys and
/// upload records, the `keys` command then never opens (or migrates) the record store, and each
/// file has one schema history (`PRAGMA user_version` is per file).
///
/// Threads: as in `SQLiteUploadRecordStore`, the connection is a `BlockingResource` (NativeOS):
/// every call runs on the store's own serial executor, never on the Swift cooperative pool.
public final class SQLiteAPIKeyStore: APIKeyStore {
    /// The file's name in the data directory.
    public static let fileName = "keys.sqlite3"

    private let database: BlockingResource<SQLiteDatabase>

    /// Schema history, applied in order by `SQLiteDatabase.migrate`; only ever append. The DML
    /// below is plain SQL that PostgreSQL runs as well (with `$n` placeholders).
    static let migrations = [
        """
        CREATE TABLE api_keys (
            id TEXT PRIMARY KEY,
            client_id TEXT NOT NULL,
            name TEXT NOT NULL,
            key_sha256 TEXT NOT NULL UNIQUE,
            created_at INTEGER NOT NULL,
            expires_at INTEGER,
            revoked_at INTEGER
        ) STRICT;
        -- One row: bumped in the transaction of every change, read by servers a few times a second.
        CREATE TABLE api_key_changes (
            singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
            version INTEGER NOT NULL
        ) STRICT;
        INSERT INTO api_key_changes (singleton, version) VALUES (1, 0);
        """
    ]

    private static let columns = "id, client_id, name, key_sha256, created_at, expires_at, revoked_at"

    /// Opens (creating if needed) the store at `path` and brings its schema up to date.
    ///
    /// Blocks while it opens and migrates; call it at startup, not from a request.
    /// - Parameter synchronous: `.full` (default): a created or revoked key survives power loss
    ///   once the command has said so.
    /// - Throws: `SQLiteError` if the file cannot be opened or migrated.
    public init(path: String, synchronous: SQLiteDatabase.Synchronous = .full) throws {
        let database = try SQLiteDatabase(path: path, configuration: .init(synchronous: synchronous))
        try database.migrate(Self.migrations)
        self.database = BlockingResource(database)
    }

    /// Opens ``fileName`` in `directory`, creating the directory if needed.
    public convenience init(directory: String, durableWrites: Bool = true) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try self.init(
            path: (directory as NSString).appendingPathComponent(Self.fileName),
            synchronous: durableWrites ? .full : .normal)
    }

    /// See ``APIKeyStore/insert(_:)``.
    public func insert(_ key: StoredAPIKey) async throws {
        try await perform { database in
            try database.transaction {
                try database.run(
                    "INSERT INTO api_keys (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        .text(key.id), .text(key.clientID), .text(key.name), .text(key.keySHA256),
                        .integer(key.createdAt), Self.optional(key.expiresAt), Self.optional(key.revokedAt),
                    ])
                try Self.bumpVersion(database)
            }
        }
    }

    /// See ``APIKeyStore/keys()``.
    public func keys() async throws -> [StoredAPIKey] {
        try await perform { database in
            try database.query("SELECT \(Self.columns) FROM api_keys ORDER BY created_at, id").map(Self.key(from:))
        }
    }

    /// See ``APIKeyStore/revoke(id:at:)``.
    public func revoke(id: String, at time: Int64) async throws -> StoredAPIKey? {
        try await perform { database in
            try database.transaction {
                try database.run(
                    "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", [.integer(time), .text(id)])
                if database.changes == 1 { try Self.bumpVersion(database) }
                return try database.query("SELECT \(Self.columns) FROM api_keys WHERE id = ?", [.text(id)])
                    .first.map(Self.key(from:))
            }
        }
    }

    /// See ``APIKeyStore/version()``.
    public func version() async throws -> Int64 {
        try await perform { database in
            try database.query("SELECT version FROM api_key_changes WHERE singleton = 1")[0].integer(0)
        }
    }

    private static func bumpVersion(_ database: SQLiteDatabase) throws {
        try database.run("UPDATE api_key_changes SET version = version + 1 WHERE singleton = 1")
    }

    private static func optional(_ value: Int64?) -> SQLiteValue {
        value.map(SQLiteValue.integer) ?? .null
    }

    private static func key(from row: SQLiteRow) throws -> StoredAPIKey {
        StoredAPIKey(
            id: try row.text(0), clientID: try row.text(1), name: try row.text(2), keySHA256: try row.text(3),
            createdAt: try row.integer(4), expiresAt: row[5].integerValue, revokedAt: row[6].integerValue)
    }

    /// Runs `work` on the store's executor with the connection, suspending the caller until it ends.
    private func perform<T: Sendable>(_ work: @escaping @Sendable (SQLiteDatabase) throws -> T) async throws -> T {
        try await database.use { try work($0) }
    }
}
