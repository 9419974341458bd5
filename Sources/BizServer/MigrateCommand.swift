import Basics
import Foundation
import NativePostgres
import NativeStore
import Outbox
public import ServerShell

/// `biz-server migrate`: copies an embedded installation (`uploads.sqlite3` and `keys.sqlite3`
/// in the data directory) into the configured PostgreSQL `database`: every upload record (same
/// ids, same order), every API key, and every webhook delivery (those still to be sent pending
/// and due now in PostgreSQL; delivered and dead ones as they were, for the admin history).
///
/// Idempotent: a record already there (same id, or same bucket, key and hash), a key already
/// there (same id or hash) and a delivery already there (same payload: it carries its message id)
/// are skipped, so a second run copies nothing and an interrupted one can be run again. Run it
/// with the old server stopped, then start the servers on the database.
public enum MigrateCommand {
    /// `--help`.
    public static let usage = """
        biz-server migrate — copies the SQLite stores of the data directory (upload records, API
        keys, webhook deliveries) into the configured PostgreSQL database
        ("database" or UPGATE_BIZ_DATABASE_URL). Re-running copies nothing twice.

        USAGE:
          biz-server migrate [--config FILE] [--data-dir DIR]

        Exit status: 0 done (one summary line), 64 bad arguments, 78 bad configuration or no
        database configured, 1 a store failed.
        """

    /// What one run copied (and found there already).
    public struct Summary: Sendable, Equatable {
        /// Upload records copied now / found in SQLite.
        public var records = 0, recordsSeen = 0
        /// API keys copied now / found.
        public var keys = 0, keysSeen = 0
        /// Webhook deliveries copied now / found.
        public var deliveries = 0, deliveriesSeen = 0

        /// A summary with these counts.
        public init(records: Int = 0, recordsSeen: Int = 0, keys: Int = 0, keysSeen: Int = 0, deliveries: Int = 0, deliveriesSeen: Int = 0) {
            (self.records, self.recordsSeen, self.keys, self.keysSeen) = (records, recordsSeen, keys, keysSeen)
            (self.deliveries, self.deliveriesSeen) = (deliveries, deliveriesSeen)
        }

        /// The one line the command prints.
        public var line: String {
            "migrated \(records) of \(recordsSeen) upload records, \(keys) of \(keysSeen) API keys, "
                + "\(deliveries) of \(deliveriesSeen) webhook deliveries (the rest were there already)"
        }
    }

    /// Runs the command with `arguments` (those after `migrate`), prints, and exits.
    public static func main(_ arguments: [String]) async -> Never {
        await run(arguments, environment: ProcessInfo.processInfo.environment).exit()
    }

    /// Runs the command in `environment`.
    public static func run(_ arguments: [String], environment: [String: String]) async -> KeysCommand.Outcome {
        let parsed: Arguments
        do {
            parsed = try Arguments(arguments, options: ["config", "data-dir"], flags: ["help"])
        } catch {
            return fail(64, "\(error)\n\n\(usage)")
        }
        if parsed.has("help") { return KeysCommand.Outcome(status: 0, output: usage + "\n") }
        if let extra = parsed.positional.first { return fail(64, "unexpected argument '\(extra)'") }
        let configuration: BizServerConfiguration
        let connectionString: PostgresConnectionString
        do {
            configuration = try BizServerConfiguration.load(
                path: parsed.value("config") ?? "Config/biz-server.json", environment: environment)
            guard let configured = try configuration.databaseConnectionString() else {
                return fail(78, "no database configured: set \"database\" or \(BizServerConfiguration.databaseVariable) to the PostgreSQL URL to copy into")
            }
            connectionString = configured
        } catch {
            return fail(78, error.description)
        }
        let directory = parsed.value("data-dir") ?? configuration.dataDirectory
        do {
            let database = PostgresBizDatabase(connectionString)
            defer { database.pool.close() }
            try await database.migrate()
            let summary = try await copy(from: directory, to: database)
            return KeysCommand.Outcome(status: 0, output: summary.line + "\n")
        } catch {
            return fail(1, "\(error)")
        }
    }

    /// Copies the SQLite stores in `directory` into `database` (migrated); see the type's
    /// documentation for what is skipped.
    public static func copy(from directory: String, to database: PostgresBizDatabase) async throws -> Summary {
        var summary = Summary()
        let recordsFile = (directory as NSString).appendingPathComponent("uploads.sqlite3")
        if FileManager.default.fileExists(atPath: recordsFile) {
            let records = try SQLiteUploadRecordStore(path: recordsFile)
            try await copyRecords(records, into: database, summary: &summary)
            try await copyDeliveries(records.webhookDeliveries, into: database, summary: &summary)
        }
        let keysFile = (directory as NSString).appendingPathComponent(SQLiteAPIKeyStore.fileName)
        if FileManager.default.fileExists(atPath: keysFile) {
            let keys = try await SQLiteAPIKeyStore(path: keysFile).keys()
            summary.keysSeen = keys.count
            summary.keys = try await database.pool.transaction { connection in
                var copied = 0
                for key in keys where try Self.absent(key, on: connection) {
                    try PostgresAPIKeyStore.insert(key, on: connection)
                    copied += 1
                }
                if copied > 0 { try connection.query("UPDATE api_key_changes SET version = version + 1 WHERE singleton = 1") }
                return copied
            }
        }
        return summary
    }

    /// Records in rowid order, a page per transaction.
    private static func copyRecords(
        _ store: SQLiteUploadRecordStore, into database: PostgresBizDatabase, summary: inout Summary
    ) async throws {
        var after: Int64 = 0
        while true {
            let cursor = after
            let page: [(rowid: Int64, record: UploadRecord)] = try await store.perform { sqlite in
                try sqlite.query(
                    "SELECT id, \(SQLiteUploadRecordStore.columns) FROM upload_records WHERE id > ? ORDER BY id LIMIT 500",
                    [.integer(cursor)]
                ).map { row in
                    (try row.integer(0), try SQLiteUploadRecordStore.record(from: SQLiteRow(values: Array(row.values.dropFirst()))))
                }
            }
            guard let last = page.last else { return }
            after = last.rowid
            summary.recordsSeen += page.count
            summary.records += try await database.pool.transaction { connection in
                var copied = 0
                for (_, record) in page {
                    // ON CONFLICT DO NOTHING without a target: a record with the same public id
                    // (copied before) or the same (bucket, key, hash) is skipped.
                    let inserted = try connection.query(
                        """
                        INSERT INTO upload_records (\(PostgresUploadRecordStore.columns))
                        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING
                        """,
                        try Self.values(record)
                    ).rowsAffected
                    copied += inserted
                }
                return copied
            }
        }
    }

    private static func values(_ record: UploadRecord) throws -> [PostgresValue] {
        let upload = record
        return [
            .text(record.id), .text(upload.clientID), .text(upload.bucket), .text(upload.key), .text(upload.hash),
            .integer(upload.fsize), .text(upload.mimeType), .text(upload.fname), .text(upload.endUser),
            .text(upload.traceID), .text(try UploadRecord.encodeVars(upload.vars)), .integer(record.receivedAt),
        ]
    }

    /// Every webhook delivery: the ones still to be sent as pending entries due now, the
    /// delivered and dead ones as they were (``PostgresOutbox/copy(_:into:now:on:)``).
    private static func copyDeliveries(
        _ outbox: any OutboxStore, into database: PostgresBizDatabase, summary: inout Summary
    ) async throws {
        let entries = try await outbox.list([.pending, .claimed, .delivered, .dead], before: nil, limit: Int(Int32.max))
        summary.deliveriesSeen = entries.count
        let now = Int64(Date().timeIntervalSince1970)
        summary.deliveries = try await database.pool.transaction { connection in
            try PostgresOutbox.copy(entries, into: WebhookMessage.table, now: now, on: connection).copied
        }
    }

    private static func absent(_ key: StoredAPIKey, on connection: PostgresConnection) throws -> Bool {
        try connection.query(
            "SELECT 1 FROM api_keys WHERE id = $1 OR key_sha256 = $2", [.text(key.id), .text(key.keySHA256)]
        ).first == nil
    }

    private static func fail(_ status: Int32, _ message: String) -> KeysCommand.Outcome {
        KeysCommand.Outcome(status: status, error: "biz-server migrate: \(message)\n")
    }
}
