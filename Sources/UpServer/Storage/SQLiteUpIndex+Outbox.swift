import NativeStore

extension SQLiteUpIndex {
    static let outboxColumns = """
        id, bucket, object_key, etag, urls, host, body, content_type, auth_scheme, attempts, next_attempt_at, \
        last_error, state, reply, first_attempt_at
        """

    /// See `UpIndex.dueCallbacks(now:limit:)`.
    public func dueCallbacks(now: Int64, limit: Int) async throws -> [OutboxEntry] {
        guard limit > 0 else { return [] }  // SQLite reads LIMIT -1 as "no limit"
        return try await perform { database in
            try database.query(
                """
                SELECT \(Self.outboxColumns) FROM outbox
                WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?
                """, [.integer(now), .integer(Int64(limit))]
            ).map(Rows.outbox)
        }
    }

    /// See `UpIndex.outboxEntry(id:)`.
    public func outboxEntry(id: Int64) async throws -> OutboxEntry? {
        try await perform { database in
            try database.query("SELECT \(Self.outboxColumns) FROM outbox WHERE id = ?", [.integer(id)])
                .first.map(Rows.outbox)
        }
    }

    /// See `UpIndex.markDelivered(_:reply:)`.
    public func markDelivered(_ id: Int64, reply: String) async throws {
        try await update(
            "UPDATE outbox SET attempts = attempts + 1, state = 'delivered', reply = ? WHERE id = ?",
            [.text(reply), .integer(id)])
    }

    /// See `UpIndex.markAttemptFailed(_:error:nextAttemptAt:)`.
    public func markAttemptFailed(_ id: Int64, error: String, nextAttemptAt: Int64?) async throws {
        if let nextAttemptAt {
            try await update(
                """
                UPDATE outbox SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?, state = 'pending'
                WHERE id = ?
                """, [.text(error), .integer(nextAttemptAt), .integer(id)])
        } else {
            try await update(
                "UPDATE outbox SET attempts = attempts + 1, last_error = ?, state = 'failed' WHERE id = ?",
                [.text(error), .integer(id)])
        }
    }

    private func update(_ sql: String, _ bindings: [SQLiteValue]) async throws {
        try await perform { database in
            try database.run(sql, bindings)
            guard database.changes == 1 else { throw UpIndexError.notFound }
        }
    }

    /// See `UpIndex.outboxDepth()`.
    public func outboxDepth() async throws -> Int {
        try await perform { Int(try $0.query("SELECT count(*) FROM outbox WHERE state = 'pending'")[0].integer(0)) }
    }

    /// See `UpIndex.listOutbox(state:limit:)`.
    public func listOutbox(state: OutboxEntry.State, limit: Int) async throws -> [OutboxEntry] {
        guard limit > 0 else { return [] }
        return try await perform { database in
            try database.query(
                "SELECT \(Self.outboxColumns) FROM outbox WHERE state = ? ORDER BY id DESC LIMIT ?",
                [.text(state.rawValue), .integer(Int64(limit))]
            ).map(Rows.outbox)
        }
    }
}
