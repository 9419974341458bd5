public import NativePostgres

extension PostgresOutbox {
    /// Copies `entries` — another store's, in any state — into `table` on `connection`, oldest
    /// first, inside the caller's transaction: how both servers' `migrate` move an embedded
    /// outbox to PostgreSQL.
    ///
    /// Entries still owed (pending, claimed) arrive pending and due at `now` with no attempts,
    /// so the new installation delivers them at once. Finished ones (delivered, dead) keep their
    /// state, attempts, last error, reply and creation time: the admin API's history and its
    /// dead letters (which an operator may requeue) carry on. An entry whose payload is already in
    /// the table (a run repeated after a failure) is not inserted again.
    ///
    /// - Returns: How many were inserted, and each source id's id in `table` (inserted or found).
    /// - Throws: ``PostgresError``.
    public static func copy(
        _ entries: [OutboxEntry], into table: String, now: Int64, on connection: PostgresConnection
    ) throws -> (copied: Int, ids: [Int64: Int64]) {
        let name = SQLiteOutbox.checkedName(table)
        var there: [String: Int64] = [:]
        for row in try connection.query("SELECT id, payload FROM \(name) ORDER BY id DESC", []).rows {
            there[try row.decode(1, as: String.self)] = try row.decode(0, as: Int64.self)
        }
        var copied = 0
        var ids: [Int64: Int64] = [:]
        for entry in entries.sorted(by: { $0.id < $1.id }) {
            if let id = there[entry.payload] {
                ids[entry.id] = id
                continue
            }
            let message = OutboxMessage(payload: entry.payload, leaseSeconds: entry.leaseSeconds)
            let id: Int64
            switch entry.delivery.state {
            case .pending, .claimed:
                id = try insert(message, now: now, into: name, on: connection).id
            case .delivered, .dead:
                id = try connection.query(
                    """
                    INSERT INTO \(name) (payload, lease_seconds, state, available_at, owner, attempts, last_error, reply, created_at)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id
                    """,
                    [.text(entry.payload), .integer(entry.leaseSeconds)] + stateValues(entry.delivery)
                        + [
                            .integer(Int64(entry.attempts)), PostgresValue(entry.lastError), PostgresValue(entry.reply),
                            .integer(entry.createdAt),
                        ]
                ).first?.decode(0) ?? 0
            }
            there[entry.payload] = id
            ids[entry.id] = id
            copied += 1
        }
        return (copied, ids)
    }
}
