import Foundation
import NativeOS
public import NativeStore
public import Outbox

/// The production `UploadRecordStore`: one SQLite file in WAL mode.
///
/// Durability: `synchronous` is `.full` by default because a record is acknowledged to the
/// up-server, which then stops retrying the callback; a record lost to a power cut after that
/// would be lost for good. `.normal` trades that for fewer fsyncs.
///
/// Threads: SQLite calls block (disk, fsync, locks). Run on the Swift cooperative pool they would
/// hold one of its few threads for each fsync, so the connection is a `GroupCommitResource`
/// (NativeStore): calls run one at a time on the blocking pool while the caller awaits, and
/// calls that queued up behind each other share one commit (one fsync), each answered only once
/// it is committed. One connection also serializes writes, which SQLite would do anyway.
public final class SQLiteUploadRecordStore: UploadRecordStore, SQLiteAccess {
    private struct State {
        let database: SQLiteDatabase
        var ids: UploadRecordIDGenerator
    }

    private let state: GroupCommitResource<State>

    /// Schema history, applied in order by `SQLiteDatabase.migrate`; only ever append.
    static let migrations = [
        """
        CREATE TABLE upload_records (
            id INTEGER PRIMARY KEY,         -- rowid: insertion order, for newest-first listing
            public_id TEXT NOT NULL UNIQUE, -- the id clients see
            client_id TEXT NOT NULL,
            bucket TEXT NOT NULL,
            object_key TEXT NOT NULL,
            hash TEXT NOT NULL,
            fsize INTEGER NOT NULL,
            mime_type TEXT NOT NULL,
            fname TEXT NOT NULL,
            end_user TEXT NOT NULL,
            trace_id TEXT NOT NULL,
            vars TEXT NOT NULL,             -- JSON object of the x: variables
            received_at INTEGER NOT NULL
        ) STRICT;
        CREATE UNIQUE INDEX upload_records_object ON upload_records (bucket, object_key, hash);
        CREATE INDEX upload_records_client ON upload_records (client_id, id);
        """,
        // The `GET /v1/uploads` filters (key, traceId, endUser) and the per-user daily byte sum,
        // each served by an index within the client instead of a scan of all its records.
        """
        CREATE INDEX upload_records_client_key ON upload_records (client_id, object_key);
        CREATE INDEX upload_records_client_trace ON upload_records (client_id, trace_id);
        CREATE INDEX upload_records_client_user ON upload_records (client_id, end_user, received_at);
        """,
        // Webhook deliveries (issue 11 §2): the shared outbox table, written in the record's transaction.
        SQLiteOutbox.migrations(table: WebhookMessage.table)[0],
    ]

    static let columns = """
        public_id, client_id, bucket, object_key, hash, fsize, mime_type, fname, end_user, trace_id, vars, received_at
        """

    /// Opens (creating if needed) the store at `path` and brings its schema up to date.
    ///
    /// Blocks while it opens and migrates; call it at startup, not from a request.
    /// - Parameters:
    ///   - path: The database file (`":memory:"` works, for one process's lifetime).
    ///   - synchronous: Durability of commits; `.full` unless losing the last acknowledged
    ///     records on power loss is acceptable.
    ///   - idGenerator: Makes ids for new records.
    /// - Throws: `SQLiteError` if the file cannot be opened or migrated.
    public init(
        path: String,
        synchronous: SQLiteDatabase.Synchronous = .full,
        idGenerator: UploadRecordIDGenerator = UploadRecordIDGenerator()
    ) throws {
        let database = try SQLiteDatabase(path: path, configuration: .init(synchronous: synchronous))
        try database.migrate(Self.migrations)
        state = GroupCommitResource(State(database: database, ids: idGenerator)) { $0.database }
    }

    /// See `UploadRecordStore.record(_:receivedAt:)`.
    ///
    /// Insert-or-ignore then read back, in one `BEGIN IMMEDIATE` transaction: whichever delivery
    /// inserts first wins, and every delivery reads the winner's row, even across processes.
    /// A new record's webhook deliveries are inserted in the same transaction (`SQLiteOutbox.insert`),
    /// so a crash after the commit finds both, and one before it neither.
    public func record(
        _ upload: NewUploadRecord,
        receivedAt: Int64,
        webhooks: @escaping @Sendable (UploadRecord) -> [OutboxMessage]
    ) async throws -> (record: UploadRecord, created: Bool) {
        let vars = try UploadRecord.encodeVars(upload.vars)
        return try await perform { state in
            let id = state.ids.next(milliseconds: receivedAt)
            let database = state.database
            return try database.transaction {
                try database.run(
                    """
                    INSERT INTO upload_records (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (bucket, object_key, hash) DO NOTHING
                    """,
                    [
                        .text(id), .text(upload.clientID), .text(upload.bucket), .text(upload.key),
                        .text(upload.hash), .integer(upload.fsize), .text(upload.mimeType), .text(upload.fname),
                        .text(upload.endUser), .text(upload.traceID), .text(vars), .integer(receivedAt),
                    ]
                )
                let created = database.changes == 1
                let rows = try database.query(
                    "SELECT \(Self.columns) FROM upload_records WHERE bucket = ? AND object_key = ? AND hash = ?",
                    [.text(upload.bucket), .text(upload.key), .text(upload.hash)]
                )
                guard let row = rows.first else {
                    // Unreachable: the row was just inserted or already there, under the write lock.
                    throw SQLiteError(code: SQLiteError.error, message: "upload record vanished inside a transaction")
                }
                let record = try Self.record(from: row)
                if created {
                    for message in webhooks(record) {
                        _ = try SQLiteOutbox.insert(
                            message, now: receivedAt / 1000, into: WebhookMessage.table, in: database)
                    }
                }
                return (record, created)
            }
        }
    }

    /// See `UploadRecordStore.upload(id:)`.
    public func upload(id: String) async throws -> UploadRecord? {
        try await perform { state in
            try state.database.query("SELECT \(Self.columns) FROM upload_records WHERE public_id = ?", [.text(id)])
                .first.map(Self.record(from:))
        }
    }

    /// See `UploadRecordStore.uploads(_:)`.
    public func uploads(_ query: UploadQuery) async throws -> [UploadRecord]? {
        try await perform { state in
            var conditions = ["client_id = ?"]
            var bindings: [SQLiteValue] = [.text(query.clientID)]
            if let after = query.after {
                // The cursor is looked up within the same client, so another client's id is as
                // unknown as a made-up one.
                let cursor = try state.database.query(
                    "SELECT id FROM upload_records WHERE public_id = ? AND client_id = ?",
                    [.text(after), .text(query.clientID)])
                guard let row = cursor.first else { return nil }
                conditions.append("id < ?")
                bindings.append(.integer(try row.integer(0)))
            }
            guard query.limit > 0 else { return [] }  // SQLite reads LIMIT -1 as "no limit"
            for (column, value) in [("object_key", query.key), ("trace_id", query.traceID), ("end_user", query.endUser)] {
                guard let value else { continue }
                conditions.append("\(column) = ?")  // column names are ours; values are bound
                bindings.append(.text(value))
            }
            bindings.append(.integer(Int64(query.limit)))
            let rows = try state.database.query(
                "SELECT \(Self.columns) FROM upload_records WHERE \(conditions.joined(separator: " AND ")) "
                    + "ORDER BY id DESC LIMIT ?",
                bindings)
            return try rows.map(Self.record(from:))
        }
    }

    /// See `UploadRecordStore.uploadSizes(clientID:endUser:since:)`; served by the
    /// (client_id, end_user, received_at) index.
    public func uploadSizes(clientID: String, endUser: String, since: Int64) async throws -> [UploadSize] {
        try await perform { state in
            try state.database.query(
                """
                SELECT received_at, fsize FROM upload_records
                WHERE client_id = ? AND end_user = ? AND received_at >= ? ORDER BY received_at
                """,
                [.text(clientID), .text(endUser), .integer(since)]
            ).map { row in UploadSize(receivedAt: try row.integer(0), fsize: try row.integer(1)) }
        }
    }

    /// See `UploadRecordStore.count()`.
    public func count() async throws -> Int {
        try await perform { state in
            Int(try state.database.query("SELECT count(*) FROM upload_records")[0].integer(0))
        }
    }

    /// The journal mode SQLite reports (`"wal"` for a file), for health checks and tests.
    public func journalMode() async throws -> String {
        try await perform { state in
            try state.database.query("PRAGMA journal_mode")[0].text(0)
        }
    }

    /// The webhook deliveries, in this database.
    public var webhookDeliveries: any OutboxStore { SQLiteOutbox(table: WebhookMessage.table, access: self) }

    /// See `SQLiteAccess.perform(_:)`: the outbox's statements run on this store's executor.
    public func perform<T: Sendable>(_ work: @escaping @Sendable (SQLiteDatabase) throws -> T) async throws -> T {
        try await state.use { try work($0.database) }
    }

    /// Runs `work` on the store's executor with the connection, suspending the caller until it ends.
    private func perform<T: Sendable>(_ work: @escaping @Sendable (inout State) throws -> T) async throws -> T {
        try await state.use(work)
    }

    static func record(from row: SQLiteRow) throws -> UploadRecord {
        let vars = try UploadRecord.decodeVars(try row.text(10))
        let upload = NewUploadRecord(
            clientID: try row.text(1),
            bucket: try row.text(2),
            key: try row.text(3),
            hash: try row.text(4),
            fsize: try row.integer(5),
            mimeType: try row.text(6),
            fname: try row.text(7),
            endUser: try row.text(8),
            traceID: try row.text(9),
            vars: vars
        )
        return UploadRecord(id: try row.text(0), upload: upload, receivedAt: try row.integer(11))
    }
}
