import Foundation
public import NativePostgres
public import Outbox
import Synchronization

/// ``UploadRecordStore`` on PostgreSQL (`upload_records` and `webhook_deliveries` of
/// ``PostgresBizDatabase``), shared by every instance.
///
/// Recording is `INSERT … ON CONFLICT (bucket, object_key, hash) DO NOTHING`, then a read of the
/// row, in one READ COMMITTED transaction: a duplicate delivered to another instance at the same
/// moment waits on the unique index for the first transaction, then reads its committed row, so
/// every delivery answers with the first record. A new record's webhook deliveries are inserted
/// into the shared outbox (``PostgresOutbox``) in the same transaction; a COMMIT that is not
/// confirmed is reported as an error (503), so up-server's outbox sends the callback again and
/// the redelivery finds the record if it did commit.
public final class PostgresUploadRecordStore: UploadRecordStore {
    private let pool: PostgresPool
    private let ids: Mutex<UploadRecordIDGenerator>

    /// The store in the (migrated) database behind `pool`.
    public init(pool: PostgresPool, idGenerator: UploadRecordIDGenerator = UploadRecordIDGenerator()) {
        self.pool = pool
        ids = Mutex(idGenerator)
    }

    static let columns = """
        public_id, client_id, bucket, object_key, hash, fsize, mime_type, fname, end_user, trace_id, vars, received_at
        """

    /// See ``UploadRecordStore/record(_:receivedAt:webhooks:)``.
    public func record(
        _ upload: NewUploadRecord, receivedAt: Int64, webhooks: @escaping @Sendable (UploadRecord) -> [OutboxMessage]
    ) async throws -> (record: UploadRecord, created: Bool) {
        let vars = try UploadRecord.encodeVars(upload.vars)
        let id = ids.withLock { $0.next(milliseconds: receivedAt) }
        return try await pool.transaction { connection in
            // One round trip for both: the INSERT is queued, and the row read after it says
            // whether it was this one (it carries this call's fresh id) or one already there.
            try Self.insert(id: id, upload, vars: vars, receivedAt: receivedAt, on: connection)
            guard let row = try connection.query(
                "SELECT \(Self.columns) FROM upload_records WHERE bucket = $1 AND object_key = $2 AND hash = $3",
                [.text(upload.bucket), .text(upload.key), .text(upload.hash)]
            ).first else {
                throw PostgresError(.other, message: "upload record vanished inside a transaction")
            }
            let record = try Self.record(from: row)
            let created = record.id == id
            if created {
                for message in webhooks(record) {
                    _ = try PostgresOutbox.insert(message, now: receivedAt / 1000, into: WebhookMessage.table, on: connection)
                }
            }
            return (record, created)
        }
    }

    /// Inserts the record unless (bucket, key, hash) is there: queued
    /// (``PostgresConnection/queue(_:_:)``), so it runs with the statement after it.
    static func insert(
        id: String, _ upload: NewUploadRecord, vars: String, receivedAt: Int64, on connection: PostgresConnection
    ) throws {
        try connection.queue(
            """
            INSERT INTO upload_records (\(columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
            ON CONFLICT (bucket, object_key, hash) DO NOTHING
            """,
            [
                .text(id), .text(upload.clientID), .text(upload.bucket), .text(upload.key), .text(upload.hash),
                .integer(upload.fsize), .text(upload.mimeType), .text(upload.fname), .text(upload.endUser),
                .text(upload.traceID), .text(vars), .integer(receivedAt),
            ])
    }

    /// See ``UploadRecordStore/upload(id:)``.
    public func upload(id: String) async throws -> UploadRecord? {
        try await pool.withConnection { connection in
            try connection.query("SELECT \(Self.columns) FROM upload_records WHERE public_id = $1", [.text(id)])
                .first.map(Self.record(from:))
        }
    }

    /// See ``UploadRecordStore/uploads(_:)``.
    public func uploads(_ query: UploadQuery) async throws -> [UploadRecord]? {
        try await pool.withConnection { connection in
            var conditions = ["client_id = $1"]
            var bindings: [PostgresValue] = [.text(query.clientID)]
            if let after = query.after {
                // Looked up within the same client: another client's id is as unknown as a made-up one.
                guard let cursor = try connection.query(
                    "SELECT id FROM upload_records WHERE public_id = $1 AND client_id = $2",
                    [.text(after), .text(query.clientID)]
                ).first else { return nil }
                bindings.append(.integer(try cursor.decode(0)))
                conditions.append("id < $\(bindings.count)")
            }
            guard query.limit > 0 else { return [] }
            for (column, value) in [("object_key", query.key), ("trace_id", query.traceID), ("end_user", query.endUser)] {
                guard let value else { continue }
                bindings.append(.text(value))
                conditions.append("\(column) = $\(bindings.count)")  // column names are ours; values are bound
            }
            bindings.append(.integer(Int64(query.limit)))
            return try connection.query(
                "SELECT \(Self.columns) FROM upload_records WHERE \(conditions.joined(separator: " AND ")) "
                    + "ORDER BY id DESC LIMIT $\(bindings.count)",
                bindings
            ).rows.map(Self.record(from:))
        }
    }

    /// See ``UploadRecordStore/uploadSizes(clientID:endUser:since:)``.
    public func uploadSizes(clientID: String, endUser: String, since: Int64) async throws -> [UploadSize] {
        try await pool.withConnection { connection in
            try connection.query(
                """
                SELECT received_at, fsize FROM upload_records
                WHERE client_id = $1 AND end_user = $2 AND received_at >= $3 ORDER BY received_at, id
                """,
                [.text(clientID), .text(endUser), .integer(since)]
            ).rows.map { row in UploadSize(receivedAt: try row.decode(0), fsize: try row.decode(1)) }
        }
    }

    /// See ``UploadRecordStore/count()``.
    public func count() async throws -> Int {
        try await pool.withConnection { connection in
            try connection.query("SELECT count(*) FROM upload_records").first?.decode(0) ?? 0
        }
    }

    /// The webhook deliveries, in this database (claimed with `FOR UPDATE SKIP LOCKED` and a lease).
    public var webhookDeliveries: any OutboxStore { PostgresOutbox(table: WebhookMessage.table, pool: pool) }

    static func record(from row: PostgresRow) throws -> UploadRecord {
        let upload = NewUploadRecord(
            clientID: try row.decode(1), bucket: try row.decode(2), key: try row.decode(3), hash: try row.decode(4),
            fsize: try row.decode(5), mimeType: try row.decode(6), fname: try row.decode(7), endUser: try row.decode(8),
            traceID: try row.decode(9), vars: try UploadRecord.decodeVars(try row.decode(10)))
        return UploadRecord(id: try row.decode(0), upload: upload, receivedAt: try row.decode(11))
    }
}
