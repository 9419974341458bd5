import NativePostgres

/// `ObjectCatalog` and the lifecycle sweep of `SweepIndex`, the twins of
/// `SQLiteUpIndex+Catalog.swift`: same rows, same answers, with the object-name locks of
/// ``PostgresUpIndex/lockName(_:on:)`` where SQLite has its one writer.
extension PostgresUpIndex: ObjectCatalog {
    /// See `ObjectCatalog.listObjects(bucket:from:below:limit:)`. Keys compare `COLLATE "C"`
    /// (bytes, as SQLite's BINARY), whatever the database's collation; `objects_key_c` indexes
    /// that order. One snapshot for the page and its objects' segments.
    public func listObjects(bucket: String, from: String, below: String?, limit: Int) async throws -> [StoredObject] {
        try await pool.transaction(isolation: .repeatableRead) { connection in
            let low = Self.keyBound(from)
            var sql = #"SELECT object_key FROM objects WHERE bucket = $1 AND object_key COLLATE "C" "#
                + (low.cut ? ">" : ">=") + " $2"
            var values: [PostgresValue] = [.text(bucket), .text(low.text)]
            if let below {
                let high = Self.keyBound(below)
                sql += #" AND object_key COLLATE "C" "# + (high.cut ? "<=" : "<") + " $3"
                values.append(.text(high.text))
            }
            values.append(.integer(Int64(max(limit, 0))))
            let keys: [String] = try connection.query(
                sql + #" ORDER BY object_key COLLATE "C" LIMIT $\#(values.count)"#, values
            ).rows.map { try $0.decode(0) }
            return try keys.compactMap { try Self.object(bucket: bucket, key: $0, on: connection) }
        }
    }

    /// A listing bound as PostgreSQL `text` can carry it: cut at its first NUL (`cut`), which
    /// `text` cannot hold. No stored key has a NUL (they are `text` too), so for every key,
    /// `key >= p + "\0" + r` is `key > p`, and `key < p + "\0" + r` is `key <= p` — the
    /// `from` a listing marker's "just after this key" makes.
    static func keyBound(_ bound: String) -> (text: String, cut: Bool) {
        guard let nul = bound.utf8.firstIndex(of: 0) else { return (bound, false) }
        return (String(bound[..<nul]), true)
    }

    /// See `ObjectCatalog.copyObject(from:to:mode:putTime:removeSource:)`. Both names are locked
    /// first, in the order of their lock names, so a copy a→b and a move b→a on two instances
    /// take turns instead of waiting on each other; `store` then finds its lock already held.
    public func copyObject(
        from source: ObjectName, to destination: ObjectName, mode: PutMode, putTime: Int64?, removeSource: Bool
    ) async throws -> [BlobID]? {
        try await transaction { connection in
            let locks = Set([source, destination].map { Self.objectLock(bucket: $0.bucket, key: $0.key) })
            for lock in locks.sorted() { try Self.lockName(lock, on: connection) }
            guard let original = try Self.object(bucket: source.bucket, key: source.key, on: connection) else {
                return nil
            }
            guard let object = try original.copied(to: destination, mode: mode, putTime: putTime) else { return [] }
            if removeSource {
                // The segments go with the row (ON DELETE CASCADE); the copy names them again below.
                try connection.query(
                    "DELETE FROM objects WHERE bucket = $1 AND object_key = $2", [.text(source.bucket), .text(source.key)])
            }
            let outcome = try Self.store(
                object, mode: mode, completion: nil, callback: nil, extraReleased: [], on: connection)
            guard case .stored(_, let released, _) = outcome else { return [] }
            return released
        }
    }

    /// See `ObjectCatalog.changeObject(_:_:)`. Under the name's lock, so a concurrent replace
    /// is changed whole or not at all.
    public func changeObject(_ name: ObjectName, _ change: ObjectChange) async throws -> StoredObject? {
        try await transaction { connection in
            try Self.lockName(Self.objectLock(bucket: name.bucket, key: name.key), on: connection)
            guard let old = try Self.object(bucket: name.bucket, key: name.key, on: connection) else { return nil }
            let new = change.applied(to: old)
            try connection.query(
                """
                UPDATE objects SET mime_type = $1, metadata = $2, delete_after_days = $3
                WHERE bucket = $4 AND object_key = $5
                """,
                [
                    .text(new.mimeType), .text(SQLiteUpIndex.Rows.metadataText(new.metadata)),
                    PostgresValue(new.deleteAfterDays), .text(name.bucket), .text(name.key),
                ])
            return new
        }
    }

    /// See `SweepIndex.deleteExpiredObjects(now:limit:)`. The expression is the one
    /// `objects_expiry` indexes, and `StoredObject.expiresAt` computes (in `bigint`: days times
    /// 86400 overflows `integer`).
    ///
    /// Each candidate's name is locked with a try-lock: a name another instance is writing is
    /// left for the next pass (never waited for, so the sweep cannot deadlock with a copy), and
    /// the object is read again under the lock, so one replaced meanwhile with a later expiry
    /// (or none) stays.
    public func deleteExpiredObjects(now: Int64, limit: Int) async throws -> ExpiredObjects {
        try await transaction { connection in
            let rows = try connection.query(
                """
                SELECT bucket, object_key FROM objects
                WHERE delete_after_days IS NOT NULL AND put_time + delete_after_days * 86400::bigint <= $1
                ORDER BY put_time + delete_after_days * 86400::bigint, bucket COLLATE "C", object_key COLLATE "C"
                LIMIT $2
                """, [.integer(now), .integer(Int64(max(limit, 0)))])
            var expired = ExpiredObjects()
            var blobs: [BlobID] = []
            for row in rows.rows {
                let name = ObjectName(bucket: try row.decode(0), key: try row.decode(1))
                let locked = try connection.query(
                    "SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))",
                    [.text(Self.objectLock(bucket: name.bucket, key: name.key))]
                ).first?.decode(0, as: Bool.self) ?? false
                guard locked, let object = try Self.object(bucket: name.bucket, key: name.key, on: connection),
                    let expiresAt = object.expiresAt, expiresAt <= now
                else { continue }
                try connection.query(
                    "DELETE FROM objects WHERE bucket = $1 AND object_key = $2", [.text(name.bucket), .text(name.key)])
                blobs += object.segments.map(\.blob)
                expired.names.append(name)
            }
            expired.blobs = try Self.unreferenced(blobs, on: connection)
            return expired
        }
    }
}
